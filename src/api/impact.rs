//! `impact`: reads the change (git or a patch), re-parses the changed files on the fly (old
//! and new side), and reports the blast radius from the index's graph.

use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::page::{PageInfo, Paging};
use super::{Analysis, ApiError};
use crate::graph::{Family, Lookup};
use crate::impact::{
    ChangeKind, ChangedFile, ChangedSymbol, FileDiff, Impact, ImpactAnalysis, UnifiedDiff,
    changed_definitions, is_public,
};
use crate::index::Coverage;
use crate::lang::LanguageRegistry;
use crate::parse::FileParser;
use crate::symbols::FileSymbols;

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImpactRequest {
    /// A unified diff (as `git diff` prints it), against the indexed tree.
    #[serde(default)]
    pub patch: Option<String>,
    /// The staged changes (`git diff --cached`).
    #[serde(default)]
    pub staged: bool,
    /// A revision range read with git, e.g. `main..HEAD`.
    #[serde(default)]
    pub range: Option<String>,
    /// Definitions about to change (qualified name, `path:line` or plain name).
    #[serde(default)]
    pub symbols: Vec<String>,
    /// Affected definitions per page (default 200). Without patch, staged, range or symbols:
    /// the working tree against HEAD.
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ImpactResponse {
    /// The change and its blast radius; `impact.affected` is paged.
    pub impact: Impact,
    pub page: PageInfo,
    pub notes: Vec<String>,
    pub generation: u64,
    pub coverage: Coverage,
}

/// Definitions one request may name.
const MAX_SYMBOLS: usize = 100;

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

fn git(root: &Path, args: &[&str]) -> Result<Vec<u8>, ApiError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(|e| ApiError::Unavailable(format!("cannot run git {}: {e}", args.join(" "))))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        // git's first line says why; the rest is usage text.
        let why = err
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("no message");
        let why = why.trim_start_matches("fatal: ").trim_start_matches("warning: ");
        let hint = match why.contains("ot a git repository") {
            true => "; without git, give the change as a patch",
            false => "",
        };
        return Err(ApiError::Unavailable(format!(
            "git {} failed in {}: {why}{hint}",
            args.first().copied().unwrap_or(""),
            root.display(),
        )));
    }
    Ok(out.stdout)
}

/// A revision as given in a range: never an option, never more than one word.
fn revision(given: &str) -> Result<&str, ApiError> {
    if given.starts_with('-') || given.chars().any(|c| c.is_whitespace() || c == '\0') || given.len() > 256 {
        return Err(ApiError::invalid("range", format!("{given:?} is not a revision")));
    }
    Ok(given)
}

/// The change a request names, as diff text, and where its two sides come from.
fn read_change(root: &Path, r: &ImpactRequest) -> Result<(Sides, String), ApiError> {
    let diff_args = ["--no-color", "--no-ext-diff", "-M"];
    Ok(if let Some(p) = &r.patch {
        (Sides::Patch, p.clone())
    } else if let Some(range) = &r.range {
        let Some((x, y)) = range.split_once("..") else {
            return Err(ApiError::invalid("range", format!("{range}: expected A..B")));
        };
        let y = y.trim_start_matches('.');
        let y = if y.is_empty() { "HEAD" } else { y };
        let (x, y) = (revision(x)?, revision(y)?);
        let spec = format!("{x}..{y}");
        let out = git(root, &["diff", diff_args[0], diff_args[1], diff_args[2], &spec])?;
        (
            Sides::Range(x.into(), y.into()),
            String::from_utf8_lossy(&out).into_owned(),
        )
    } else if r.staged {
        let out = git(
            root,
            &["diff", "--cached", diff_args[0], diff_args[1], diff_args[2]],
        )?;
        (Sides::Staged, String::from_utf8_lossy(&out).into_owned())
    } else {
        let out = git(root, &["diff", "HEAD", diff_args[0], diff_args[1], diff_args[2]])?;
        (
            Sides::Worktree("HEAD".into()),
            String::from_utf8_lossy(&out).into_owned(),
        )
    })
}

/// A file's content on one side (`None`: absent there).
fn content(root: &Path, sides: &Sides, path: &str, old: bool) -> Option<Vec<u8>> {
    let show = |rev: &str| git(root, &["show", &format!("{rev}:{path}")]).ok();
    match (sides, old) {
        (Sides::Worktree(rev), true) => show(rev),
        // The same confinement as a file a request names: git's paths are inside the tree,
        // but a symbolic link there may lead anywhere and a secrets-shaped file is never read.
        (Sides::Worktree(_), false) => match super::PrivatePath::of(path) {
            Some(_) => None,
            None => crate::util::read_no_follow(&root.join(path)).ok(),
        },
        (Sides::Staged, true) => show("HEAD"),
        (Sides::Staged, false) => show(""),
        (Sides::Range(a, _), true) => show(a),
        (Sides::Range(_, b), false) => show(b),
        (Sides::Patch, _) => None,
    }
}

/// At most one way of giving the change, and not too many definitions.
fn check_request(r: &ImpactRequest) -> Result<(), ApiError> {
    let asked = [
        r.patch.is_some(),
        r.staged,
        r.range.is_some(),
        !r.symbols.is_empty(),
    ];
    if asked.iter().filter(|a| **a).count() > 1 {
        return Err(ApiError::invalid(
            "patch",
            "give at most one of patch, staged, range and symbols",
        ));
    }
    if r.symbols.len() > MAX_SYMBOLS {
        return Err(ApiError::invalid(
            "symbols",
            format!("{} names; at most {MAX_SYMBOLS} at once", r.symbols.len()),
        ));
    }
    Ok(())
}

impl Analysis {
    pub fn impact(&self, r: &ImpactRequest) -> Result<ImpactResponse, ApiError> {
        check_request(r)?;
        let paging = Paging::new(r.cursor.as_deref(), r.limit, 200, 5000, r.max_tokens)?;
        let graph = self
            .graph()
            .map_err(|e| ApiError::Unavailable(format!("impact needs the code graph: {e}")))?;
        let snapshot = self.snapshot();
        let analysis =
            ImpactAnalysis::with_symbol_graph(graph, std::borrow::Cow::Borrowed(self.symbol_graph()?))
                .with_root(self.root())
                .with_history(self.history().ok());
        let records = |path: &str| -> Option<FileSymbols> {
            let id = snapshot.file_id(path)?;
            snapshot.load_symbols_of(&[id]).ok()?.into_iter().next()
        };
        let (changed_files, changed) = match r.symbols.is_empty() {
            false => self.changed_symbols(&r.symbols, &records)?,
            true => self.changed_by_diff(r, &analysis, &records)?,
        };
        let mut notes = self.change_notes(&changed_files);
        let mut impact = analysis.analyse(changed_files, changed, &records);
        if impact.bounded {
            notes.push(
                "the walk stopped at its bound (depth 8 or 5,000 definitions); more may be affected".into(),
            );
        }
        if !impact.unreached.is_empty() {
            let shown: Vec<&str> = impact.unreached.iter().take(5).map(String::as_str).collect();
            notes.push(format!(
                "no test reaches {} changed definition(s) through the graph (called dynamically, or untested): \
                 the tests of their packages must run: {}",
                impact.unreached.len(),
                shown.join(", ")
            ));
        }
        let affected = std::mem::take(&mut impact.affected);
        let total = affected.len();
        let (affected, page) = paging.apply(affected, total);
        impact.affected = affected;
        // What the note saying so takes is kept out of the lists' share.
        if let Some(budget) = r.max_tokens
            && let Some(cut) = fit_lists(&mut impact, budget.saturating_sub(45))
        {
            notes.push(cut);
        }
        Ok(ImpactResponse {
            impact,
            page,
            notes,
            generation: self.generation(),
            coverage: self.coverage(),
        })
    }

    /// What the answer should say about the change itself: that it is empty, that tests come
    /// without the history, and which changed files the index does not hold.
    fn change_notes(&self, changed_files: &[String]) -> Vec<String> {
        let snapshot = self.snapshot();
        let mut notes = Vec::new();
        if changed_files.is_empty() {
            notes.push("the change is empty: nothing to analyse".into());
        }
        if let Err(e) = self.history() {
            notes.push(format!(
                "{e}: tests are found through the graph, naming and suites, not through past co-changes"
            ));
        }
        let unindexed: Vec<&String> = changed_files
            .iter()
            .filter(|p| snapshot.file_id(p).is_none())
            .collect();
        if !unindexed.is_empty() {
            notes.push(format!(
                "{} changed file(s) are not in the index (new, or not a supported language): {}",
                unindexed.len(),
                unindexed
                    .iter()
                    .take(5)
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        notes
    }

    fn changed_symbols(
        &self,
        names: &[String],
        records: &dyn Fn(&str) -> Option<FileSymbols>,
    ) -> Result<(Vec<String>, Vec<ChangedSymbol>), ApiError> {
        let graph = self.graph()?;
        let q = self.graph_query()?;
        let mut files = Vec::new();
        let mut changed = Vec::new();
        for name in names {
            let ids = match q.find(name) {
                Lookup::Found(id) => vec![id],
                // Overloads (one qualified name, several definitions) change together.
                Lookup::Ambiguous(c)
                    if c.windows(2)
                        .all(|w| q.info(w[0]).qualified == q.info(w[1]).qualified) =>
                {
                    c
                }
                Lookup::Ambiguous(c) => {
                    return Err(ApiError::invalid(
                        "symbols",
                        format!(
                            "{name} names {} definitions; qualify it (e.g. with its module or path:line)",
                            c.len()
                        ),
                    ));
                }
                Lookup::NotFound => {
                    return Err(ApiError::invalid(
                        "symbols",
                        format!(
                            "{name}: no such definition in the index ({} files)",
                            self.snapshot().table.files.len()
                        ),
                    ));
                }
            };
            for id in ids {
                let info = q.info(id);
                let Some(gf) = graph.files.get(id.file.index()) else {
                    continue;
                };
                let Some(kind) = gf.defs.get(id.def as usize).map(|d| d.kind) else {
                    continue;
                };
                let public = records(&info.path)
                    .as_ref()
                    .and_then(|r| r.definitions.get(id.def as usize))
                    .is_some_and(|d| is_public(&gf.language, d));
                files.push(info.path.clone());
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
        }
        Ok((files, changed))
    }

    fn changed_by_diff(
        &self,
        r: &ImpactRequest,
        analysis: &ImpactAnalysis<'_>,
        records: &dyn Fn(&str) -> Option<FileSymbols>,
    ) -> Result<(Vec<String>, Vec<ChangedSymbol>), ApiError> {
        let root = self.root();
        let (sides, text) = read_change(root, r)?;
        let diff = UnifiedDiff::parse(&text)
            .map_err(|e| ApiError::invalid("patch", format!("the change is not a unified diff: {e}")))?;
        let snapshot = self.snapshot();
        let language_of = |path: &str| -> (String, String) {
            match snapshot
                .file_id(path)
                .and_then(|id| snapshot.table.files.get(id.index()))
            {
                Some(r) => (r.language.clone(), r.module.clone()),
                None => (String::new(), String::new()),
            }
        };
        let registry = LanguageRegistry::builtin().map_err(|e| ApiError::Internal(e.to_string()))?;
        let mut parser = FileParser::new();
        let mut parse = |path: &str, bytes: Option<Vec<u8>>| -> Option<FileSymbols> {
            let name = path.rsplit('/').next().unwrap_or(path);
            let (_, spec) = registry.for_file_name(name)?;
            Some(parser.parse(spec, &bytes?))
        };
        let mut files = Vec::new();
        let mut changed = Vec::new();
        for f in diff.files.iter().filter(|f| !f.binary) {
            files.push(f.path().to_string());
            let old_path = f.old_path.as_deref();
            let new_path = f.new_path.as_deref();
            let old = match (&sides, old_path) {
                (Sides::Patch, Some(p)) => records(p),
                (_, Some(p)) => parse(p, content(root, &sides, p, true)),
                (_, None) => None,
            };
            let new = match new_path {
                Some(p) => parse(p, content(root, &sides, p, false)),
                None => None,
            };
            let (language, _) = language_of(old_path.or(new_path).unwrap_or(""));
            let language = match language.is_empty() {
                false => language,
                true => registry
                    .for_file_name(f.path().rsplit('/').next().unwrap_or(""))
                    .map(|(_, s)| s.name.to_string())
                    .unwrap_or_default(),
            };
            collect(
                analysis,
                f,
                old.as_ref(),
                new.as_ref(),
                &language,
                &language_of,
                &mut changed,
            );
        }
        Ok((files, changed))
    }
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

/// Cuts the answer's other lists (the affected definitions are paged already) until the
/// whole impact fits `budget` tokens: the longest list loses half its tail at a time, the
/// tests to run last of all. Says what was left out, or `None` when it fit.
fn fit_lists(impact: &mut crate::impact::Impact, budget: usize) -> Option<String> {
    let tokens =
        |i: &crate::impact::Impact| serde_json::to_string(i).map_or(0, |t| crate::context::count_tokens(&t));
    // Affected, files, public API, entry points, tests, then what is cut last.
    let counts = |i: &crate::impact::Impact| {
        [
            i.affected.len(),
            i.affected_files.len(),
            i.public_api.len(),
            i.entry_points.len(),
            i.tests.len(),
            i.changed.len(),
            i.risk.reasons.len(),
        ]
    };
    let before = counts(impact);
    // A few halvings per list reach any budget; the bound keeps a pathological answer finite.
    for _ in 0..64 {
        if tokens(impact) <= budget {
            break;
        }
        let lens = [
            impact.affected_files.len(),
            impact.public_api.len(),
            impact.entry_points.len(),
            impact.affected.len(),
        ];
        let longest = (0..lens.len()).max_by_key(|&i| lens[i]).filter(|&i| lens[i] > 0);
        match longest {
            Some(0) => impact.affected_files.truncate(lens[0] / 2),
            Some(1) => impact.public_api.truncate(lens[1] / 2),
            Some(2) => impact.entry_points.truncate(lens[2] / 2),
            Some(_) => impact.affected.truncate(lens[3] / 2),
            None if !impact.tests.is_empty() => {
                let keep = impact.tests.len() / 2;
                impact.tests.truncate(keep);
                impact.test_commands.truncate(keep);
            }
            // Past every list: the changed definitions and the risk's reasons (the level stays).
            None if impact.changed.len() > 1 => impact.changed.truncate(impact.changed.len() / 2),
            None if impact.risk.reasons.len() > 1 => impact.risk.reasons.truncate(1),
            None => break,
        }
    }
    let after = counts(impact);
    (after != before).then(|| {
        format!(
            "cut to max_tokens; shown: definitions {}/{}, files {}/{}, API {}/{}, entries {}/{}, tests {}/{}",
            after[0],
            before[0],
            after[1],
            before[1],
            after[2],
            before[2],
            after[3],
            before[3],
            after[4],
            before[4]
        )
    })
}
