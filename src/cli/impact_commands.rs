//! `ken impact`: reads the change (git or a patch), re-parses the changed files on the fly
//! (old and new side), and reports the blast radius.

use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitCode};

use anyhow::{Context as _, Result, bail};

use super::args::ImpactArgs;
use super::commands::locate;
use crate::context::{
    ChangeKind, ChangedFile, ChangedSymbol, FileDiff, Impact, ImpactAnalysis, UnifiedDiff,
    changed_definitions, is_public,
};
use crate::graph::{Family, GraphQuery, Lookup};
use crate::index::{Coverage, IndexSnapshot, WorkingTreeDiff};
use crate::lang::LanguageRegistry;
use crate::parse::FileParser;
use crate::symbols::FileSymbols;

/// Where the two sides of the change come from.
enum Sides {
    /// Old: `git show REV:path`; new: the working tree.
    Worktree(String),
    /// Old: HEAD; new: the index (`git show :path`).
    Staged,
    /// Old and new revisions.
    Range(String, String),
    /// Old: the index's records; new: unknown.
    Patch,
}

fn git(root: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .with_context(|| format!("cannot run git {}", args.join(" ")))?;
    if !out.status.success() {
        bail!(
            "git {} failed in {}: {}",
            args.join(" "),
            root.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}

/// A file's content on one side (`None`: absent there).
fn content(root: &Path, sides: &Sides, path: &str, old: bool) -> Option<Vec<u8>> {
    let show = |rev: &str| git(root, &["show", &format!("{rev}:{path}")]).ok();
    match (sides, old) {
        (Sides::Worktree(rev), true) => show(rev),
        (Sides::Worktree(_), false) => std::fs::read(root.join(path)).ok(),
        (Sides::Staged, true) => show("HEAD"),
        (Sides::Staged, false) => show(""),
        (Sides::Range(a, _), true) => show(a),
        (Sides::Range(_, b), false) => show(b),
        (Sides::Patch, _) => None,
    }
}

pub fn impact(a: ImpactArgs) -> Result<ExitCode> {
    let (root, dir) = locate(a.repo.as_deref(), a.location.index_dir.clone())?;
    let snapshot = IndexSnapshot::open(&dir)?;
    let graph = snapshot.graph().context("ken impact needs the code graph")?;
    let t0 = std::time::Instant::now();
    let analysis = ImpactAnalysis::new(&graph);
    let records = |path: &str| -> Option<FileSymbols> {
        let id = snapshot.file_id(path)?;
        snapshot.load_symbols_of(&[id]).ok()?.into_iter().next()
    };
    let language_of = |path: &str| -> (String, String) {
        match snapshot
            .file_id(path)
            .and_then(|id| snapshot.table.files.get(id.index()))
        {
            Some(r) => (r.language.clone(), r.module.clone()),
            None => (String::new(), String::new()),
        }
    };
    let mut changed: Vec<ChangedSymbol> = Vec::new();
    let mut changed_files: Vec<String> = Vec::new();
    if !a.symbol.is_empty() {
        let q = GraphQuery::new(&graph);
        for name in &a.symbol {
            let id = match q.find(name) {
                Lookup::Found(id) => id,
                Lookup::Ambiguous(c) => bail!(
                    "--symbol {name} names {} definitions; qualify it (e.g. with its module or path:line)",
                    c.len()
                ),
                Lookup::NotFound => bail!(
                    "--symbol {name}: no such definition in the index ({} files)",
                    snapshot.table.files.len()
                ),
            };
            let info = q.info(id);
            let Some(gf) = graph.files.get(id.file.index()) else {
                continue;
            };
            let Some(kind) = gf.defs.get(id.def as usize).map(|d| d.kind) else {
                continue;
            };
            let rec = records(&info.path);
            let public = rec
                .as_ref()
                .and_then(|r| r.definitions.get(id.def as usize))
                .is_some_and(|d| is_public(&gf.language, d));
            changed_files.push(info.path.clone());
            changed.push(ChangedSymbol {
                qualified_name: info.qualified.clone(),
                kind,
                path: info.path.clone(),
                start_line: info.line,
                end_line: info.end_line,
                change: ChangeKind::Signature,
                public,
                in_graph: true,
                id: Some(id),
            });
        }
    } else {
        let (sides, text) = if let Some(p) = &a.patch {
            let text = match p.as_os_str() == "-" {
                true => std::io::read_to_string(std::io::stdin()).context("reading the patch from stdin")?,
                false => std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read --patch {}", p.display()))?,
            };
            (Sides::Patch, text)
        } else if let Some(r) = &a.range {
            let Some((x, y)) = r.split_once("..") else {
                bail!("--range {r}: expected A..B");
            };
            let y = y.trim_start_matches('.');
            let y = if y.is_empty() { "HEAD" } else { y };
            let out = git(
                &root,
                &["diff", "--no-color", "--no-ext-diff", "-M", &format!("{x}..{y}")],
            )?;
            (
                Sides::Range(x.to_string(), y.to_string()),
                String::from_utf8_lossy(&out).into_owned(),
            )
        } else if a.staged {
            let out = git(&root, &["diff", "--cached", "--no-color", "--no-ext-diff", "-M"])?;
            (Sides::Staged, String::from_utf8_lossy(&out).into_owned())
        } else {
            let out = git(&root, &["diff", "HEAD", "--no-color", "--no-ext-diff", "-M"])?;
            (
                Sides::Worktree("HEAD".into()),
                String::from_utf8_lossy(&out).into_owned(),
            )
        };
        let diff = UnifiedDiff::parse(&text)
            .map_err(|e| anyhow::anyhow!("the change is not a unified diff: {e}"))?;
        let registry = LanguageRegistry::builtin()?;
        let mut parser = FileParser::new();
        let mut parse = |path: &str, bytes: Option<Vec<u8>>| -> Option<FileSymbols> {
            let name = path.rsplit('/').next().unwrap_or(path);
            let (_, spec) = registry.for_file_name(name)?;
            Some(parser.parse(spec, &bytes?))
        };
        for f in diff.files.iter().filter(|f| !f.binary) {
            changed_files.push(f.path().to_string());
            let old_path = f.old_path.as_deref();
            let new_path = f.new_path.as_deref();
            let old = match (&sides, old_path) {
                (Sides::Patch, Some(p)) => records(p),
                (_, Some(p)) => parse(p, content(&root, &sides, p, true)),
                (_, None) => None,
            };
            let new = match new_path {
                Some(p) => parse(p, content(&root, &sides, p, false)),
                None => None,
            };
            let (language, _) = language_of(old_path.or(new_path).unwrap_or(""));
            let language = if language.is_empty() {
                registry
                    .for_file_name(f.path().rsplit('/').next().unwrap_or(""))
                    .map(|(_, s)| s.name.to_string())
                    .unwrap_or_default()
            } else {
                language
            };
            collect(
                &analysis,
                f,
                old.as_ref(),
                new.as_ref(),
                &language,
                &language_of,
                &mut changed,
            );
        }
    }
    let impact = analysis.analyse(changed_files, changed, &records);
    let elapsed_ms = t0.elapsed().as_millis() as u64;
    let diff = WorkingTreeDiff::quick(&root, &snapshot);
    let coverage = Coverage::of(&snapshot, Some(&diff));
    let mut out = std::io::stdout().lock();
    if a.json {
        let v = serde_json::json!({ "impact": impact, "coverage": coverage, "elapsed_ms": elapsed_ms });
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        render(&mut out, &impact, a.limit)?;
    }
    if impact.bounded {
        eprintln!("note: the walk stopped at its bound (depth 8 or 5,000 definitions); more may be affected");
    }
    if coverage.stale.unwrap_or(0) > 0 {
        eprintln!(
            "note: {} files changed since the index was built; dependents come from the index",
            coverage.stale.unwrap_or(0)
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn collect(
    analysis: &ImpactAnalysis<'_>,
    f: &FileDiff,
    old: Option<&FileSymbols>,
    new: Option<&FileSymbols>,
    language: &str,
    language_of: &dyn Fn(&str) -> (String, String),
    changed: &mut Vec<ChangedSymbol>,
) {
    let file = ChangedFile {
        diff: f,
        old,
        new,
        language: language.to_string(),
    };
    let sep = Family::of(language).separator();
    for (d, kind) in changed_definitions(&file) {
        let path = match kind {
            ChangeKind::Added => f.new_path.clone(),
            _ => f.old_path.clone(),
        }
        .unwrap_or_default();
        let id = match kind {
            ChangeKind::Added => None,
            _ => analysis.find(&path, &d),
        };
        let module = language_of(&path).1;
        changed.push(ChangedSymbol {
            qualified_name: d.qualified_name(&module, sep),
            kind: d.kind,
            path,
            start_line: d.span.start_line,
            end_line: d.span.end_line,
            change: kind,
            public: is_public(language, &d),
            in_graph: id.is_some(),
            id,
        });
    }
}

fn render(out: &mut impl Write, i: &Impact, limit: usize) -> Result<()> {
    writeln!(
        out,
        "Changed: {} definitions in {} files",
        i.changed.len(),
        i.changed_files.len()
    )?;
    for c in &i.changed {
        let change = serde_json::to_value(c.change)?.as_str().unwrap_or("").to_string();
        writeln!(
            out,
            "  {change:<9}  {}  {}:{}-{}{}",
            c.qualified_name,
            c.path,
            c.start_line,
            c.end_line,
            if c.public { "  (public)" } else { "" }
        )?;
    }
    writeln!(
        out,
        "\nAffected: {} direct, {} transitive dependents in {} files",
        i.direct_dependents,
        i.transitive_dependents,
        i.affected_files.len()
    )?;
    for a in i.affected.iter().take(limit) {
        // From the change to this definition: `changed <- caller (provenance confidence) <- ...`.
        let mut chain = a.via.first().map(|s| s.to.clone()).unwrap_or_default();
        for s in &a.via {
            let how = s.provenance.as_deref().unwrap_or(s.edge.as_str());
            chain.push_str(&format!(
                " <- {} ({} {} {:.2})",
                s.from,
                s.edge.as_str(),
                how,
                s.confidence
            ));
        }
        writeln!(
            out,
            "  {:.2}  {}{}  {}:{}{}\n        {chain}",
            a.score,
            a.qualified_name,
            if a.is_test { "  [test]" } else { "" },
            a.path,
            a.line,
            if a.direct { "  (direct)" } else { "" },
        )?;
    }
    if i.affected.len() > limit {
        writeln!(out, "  ... {} more (--limit, --json)", i.affected.len() - limit)?;
    }
    if !i.public_api.is_empty() {
        writeln!(
            out,
            "\nPublic API touched or reached: {}",
            i.public_api
                .iter()
                .take(10)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    if !i.entry_points.is_empty() {
        writeln!(out, "\nEntry points reached:")?;
        for e in &i.entry_points {
            writeln!(out, "  {}: {} at {}:{}", e.kind, e.name, e.path, e.line)?;
        }
    }
    writeln!(out, "\nTests to run ({}):", i.tests.len())?;
    for t in i.tests.iter().take(limit) {
        writeln!(
            out,
            "  {}  ({})",
            t.command.as_deref().unwrap_or(&t.path),
            t.found_by
        )?;
    }
    if !i.test_commands.is_empty() {
        writeln!(out, "\nRun:\n  {}", i.test_commands.join("\n  "))?;
    }
    writeln!(out, "\nRisk: {} — {}", i.risk.level, i.risk.reasons.join("; "))?;
    Ok(())
}
