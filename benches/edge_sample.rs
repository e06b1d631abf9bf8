//! A reproducible sample of the code graph's resolved call edges, for checking by hand where no
//! oracle installs from the registries (issue 32's new languages).
//!
//! Usage: `cargo bench --bench edge_sample -- REPO LANGUAGE [--n 50] [--seed 1] [--names]`
//!
//! Builds the index of REPO from scratch, then prints N call edges of files in LANGUAGE,
//! chosen by a seeded hash (the same N for the same tree, seed and rules), each with the call
//! line as written and the target's place and signature: `--names` samples name-matched edges
//! instead of rule edges. Each printed edge is judged against the code by reading it; the
//! judgements, not this tool, are the measurement.

use std::path::PathBuf;

use anyhow::{Context, Result};
use kenning::graph::Resolver;
use kenning::symbols::ReferenceKind;
use kenning::{IndexBuilder, IndexConfig, IndexSnapshot, NoProgress};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let (mut n, mut seed, mut names) = (50usize, 1u64, false);
    let mut pos = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--n" => n = it.next().and_then(|s| s.parse().ok()).unwrap_or(n),
            "--seed" => seed = it.next().and_then(|s| s.parse().ok()).unwrap_or(seed),
            "--names" => names = true,
            _ => pos.push(a),
        }
    }
    let [repo, lang] = pos.as_slice() else {
        eprintln!("usage: cargo bench --bench edge_sample -- REPO LANGUAGE [--n 50] [--seed 1] [--names]");
        return Ok(());
    };
    let repo = PathBuf::from(repo).canonicalize().context("repo")?;
    let config = IndexConfig {
        full: true,
        ..IndexConfig::default()
    };
    IndexBuilder::new(&repo, &config, &NoProgress)?.build()?;
    let snapshot = IndexSnapshot::open(&config.index_dir_for(&repo))?;
    let graph = snapshot.graph()?;
    let mut edges = Vec::new();
    let (mut rule_edges, mut name_edges) = (0u64, 0u64);
    for (fi, f) in graph.files.iter().enumerate() {
        if f.language.as_str() != lang.as_str() {
            continue;
        }
        for (ri, (r, rr)) in f.refs.iter().zip(&graph.resolved[fi].refs).enumerate() {
            // Calls and instantiations, as `graph_accuracy` counts them: not base classes.
            let call = r.kind == ReferenceKind::Call
                || (r.kind == ReferenceKind::Class && !Resolver::is_base_ref(f, r));
            if !call {
                continue;
            }
            let Some(prov) = rr.provenance else { continue };
            match prov.is_resolved() {
                true => rule_edges += 1,
                false => name_edges += 1,
            }
            if prov.is_resolved() == names {
                continue;
            }
            let key = blake3::hash(format!("{seed}:{}:{}:{}", f.path, r.line, r.name).as_bytes());
            edges.push((*key.as_bytes(), fi, ri));
        }
    }
    let line_of = |path: &kenning::symbols::RepoPath, line: u32| -> String {
        std::fs::read_to_string(path.to_fs(&repo))
            .ok()
            .and_then(|s| {
                s.lines()
                    .nth(line.saturating_sub(1) as usize)
                    .map(|l| l.trim().chars().take(160).collect())
            })
            .unwrap_or_default()
    };
    edges.sort();
    println!(
        "# {} {lang}: {rule_edges} rule call edges, {name_edges} name-matched; {} sampled ({}), seed {seed}",
        repo.display(),
        n.min(edges.len()),
        if names { "name-matched" } else { "rules" }
    );
    for &(_, fi, ri) in edges.iter().take(n) {
        let f = &graph.files[fi];
        let r = &f.refs[ri];
        let rr = &graph.resolved[fi].refs[ri];
        let targets: Vec<String> = rr
            .targets
            .iter()
            .filter_map(|t| {
                let tf = graph.files.get(t.file.index())?;
                let d = tf.defs.get(t.def as usize)?;
                Some(format!(
                    "`{}` at {}:{} `{}`",
                    tf.qualified(t.def),
                    tf.path,
                    d.line,
                    line_of(&tf.path, d.line)
                ))
            })
            .collect();
        let prov = rr.provenance.map_or("-", |p| p.as_str());
        println!(
            "- {}:{} `{}` ({}, {prov}) -> {}",
            f.path,
            r.line,
            line_of(&f.path, r.line),
            r.name,
            targets.join("; ")
        );
    }
    Ok(())
}
