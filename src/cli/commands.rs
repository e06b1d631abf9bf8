//! Runs a parsed command line.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

use super::args::{
    BuildArgs, Cli, Command, EmbedderKind, GraphCommand, IndexCommand, SearchArgs, StatusArgs, SymbolArgs,
};
use super::progress::ProgressBars;
use super::render;
use super::{context_commands, graph_commands, impact_commands};
use crate::agent::providers::{self, EmbedApi, EmbedderSettings, HttpEmbedder, embedder_from_settings};
use crate::index::{
    CodeSearch, Coverage, IndexBuilder, IndexConfig, IndexSnapshot, SearchTarget, SemanticHit, SymbolLookup,
    WalkConfig, WorkingTreeDiff, fuse_files,
};
use crate::lexical::LineSearchMode;
use crate::vector::Embedder;
use std::sync::Arc;

pub fn run(cli: Cli) -> Result<ExitCode> {
    let quiet = cli.quiet;
    match cli.command {
        Command::Index(IndexCommand::Build(a)) => build(a, quiet),
        Command::Index(IndexCommand::Status(a)) => status(a),
        Command::Symbol(a) => symbol(a),
        Command::Search(a) => search(a),
        Command::Context(a) => context_commands::context(a),
        Command::Ask(a) => context_commands::ask(a),
        Command::Overview(a) => context_commands::overview(a),
        Command::Impact(a) => impact_commands::impact(a),
        Command::Callers(a) => graph_commands::calls(a, petgraph::Direction::Incoming),
        Command::Callees(a) => graph_commands::calls(a, petgraph::Direction::Outgoing),
        Command::Refs(a) => graph_commands::refs(a),
        Command::Deps(a) => graph_commands::deps(a),
        Command::Graph(GraphCommand::Stats(a)) => graph_commands::stats(a),
    }
}

fn build(a: BuildArgs, quiet: bool) -> Result<ExitCode> {
    let mut walk = WalkConfig::default();
    if let Some(n) = a.max_file_size {
        walk.max_file_size = n;
    }
    walk.follow_symlinks = a.follow_symlinks;
    let config = IndexConfig {
        walk,
        index_dir: a.location.index_dir.clone(),
        threads: a.threads,
        full: a.full,
        lexical: !a.no_lexical,
        graph: !a.no_graph,
        vectors: !a.no_semantic,
    };
    let progress = ProgressBars::new(quiet || !std::io::stderr().is_terminal());
    let builder = IndexBuilder::new(&a.path, &config, &progress)
        .with_context(|| format!("cannot index {}", a.path.display()))?;
    let embedder = match config.vectors {
        true => build_embedder(&a, &config.index_dir_for(builder.root()))?,
        false => None,
    };
    let builder = builder.with_embedder(embedder);
    let report = builder
        .build()
        .with_context(|| format!("indexing {} failed", builder.root().display()))?;
    let mut out = std::io::stdout().lock();
    if a.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        render::build_report(&mut out, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The model a build embeds with: the one asked for, else the one the index was built with.
fn build_embedder(a: &BuildArgs, index_dir: &Path) -> Result<Option<Arc<dyn Embedder>>> {
    let api = match a.embedder {
        Some(EmbedderKind::Builtin) => return Ok(None),
        Some(EmbedderKind::Openai) => EmbedApi::Openai,
        Some(EmbedderKind::Ollama) => EmbedApi::Ollama,
        Some(EmbedderKind::Minilm) => return Ok(Some(providers::minilm()?)),
        None => {
            if a.embed_url.is_some() || a.embed_model.is_some() || a.embed_key_env.is_some() {
                anyhow::bail!("--embed-url, --embed-model and --embed-key-env need --embedder openai|ollama");
            }
            // Keep the previous build's model (a missing or unreadable index: the built-in one).
            let Ok(previous) = IndexSnapshot::open(index_dir) else {
                return Ok(None);
            };
            return stored_embedder(&previous);
        }
    };
    let url = a.embed_url.clone().unwrap_or_else(|| {
        match api {
            EmbedApi::Openai => "https://api.openai.com/v1",
            EmbedApi::Ollama => "http://localhost:11434",
        }
        .to_string()
    });
    let Some(model) = a.embed_model.as_deref() else {
        anyhow::bail!(
            "--embedder {} needs --embed-model NAME",
            if api == EmbedApi::Openai {
                "openai"
            } else {
                "ollama"
            }
        );
    };
    let mut settings = EmbedderSettings::new(api, &url, model);
    settings.batch = a.embed_batch.max(1);
    settings.key_env = a.embed_key_env.clone().or_else(|| {
        url.contains("api.openai.com")
            .then(|| "OPENAI_API_KEY".to_string())
    });
    let e = HttpEmbedder::connect(settings)
        .with_context(|| format!("cannot use the embedding model {model} at {url}"))?;
    Ok(Some(Arc::new(e)))
}

/// The model the index's semantic part was built with (`None`: the built-in one).
pub(super) fn stored_embedder(snapshot: &IndexSnapshot) -> Result<Option<Arc<dyn Embedder>>> {
    match snapshot.embedder_settings() {
        None => Ok(None),
        Some(s) => {
            embedder_from_settings(s).context("cannot reach the embedding model this index was built with")
        }
    }
}

/// The repository root and index folder: explicit, or found upwards from `start` like git.
pub(super) fn locate(start: Option<&Path>, index_dir: Option<PathBuf>) -> Result<(PathBuf, PathBuf)> {
    let start = match start {
        Some(p) => p.to_path_buf(),
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    let start = start
        .canonicalize()
        .with_context(|| format!("{} does not exist", start.display()))?;
    if let Some(dir) = index_dir {
        return Ok((start, dir));
    }
    let found = start
        .ancestors()
        .find(|d| d.join(".kenning").join("FORMAT").is_file());
    match found {
        Some(root) => Ok((root.to_path_buf(), root.join(".kenning"))),
        None => anyhow::bail!(
            "no index found at {} or above it; run `ken index build {}` first",
            start.display(),
            start.display()
        ),
    }
}

fn status(a: StatusArgs) -> Result<ExitCode> {
    let (root, dir) = locate(a.path.as_deref(), a.location.index_dir)?;
    let snapshot = IndexSnapshot::open(&dir)?;
    let diff = WorkingTreeDiff::compute(&root, &snapshot)
        .with_context(|| format!("comparing {} with its index", root.display()))?;
    let view = render::StatusView::new(&root, &snapshot, &diff);
    let mut out = std::io::stdout().lock();
    if a.json {
        serde_json::to_writer_pretty(&mut out, &view)?;
        writeln!(out)?;
    } else {
        render::status(&mut out, &view, a.details)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn symbol(a: SymbolArgs) -> Result<ExitCode> {
    let (root, dir) = locate(a.repo.as_deref(), a.location.index_dir)?;
    let snapshot = IndexSnapshot::open(&dir)?;
    let lookup = SymbolLookup::new(&snapshot)?;
    let mut hits = lookup.find(&a.name)?;
    let total = hits.len();
    hits.truncate(a.limit);
    let diff = Some(WorkingTreeDiff::quick(&root, &snapshot));
    let coverage = Coverage::of(&snapshot, diff.as_ref());
    let mut out = std::io::stdout().lock();
    if a.json {
        let v = serde_json::json!({ "query": a.name, "total": total, "hits": hits, "coverage": coverage });
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        render::symbol_hits(&mut out, &hits, total)?;
    }
    render::coverage_note(&coverage, hits.is_empty(), &a.name);
    Ok(if hits.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Reciprocal rank fusion constant for `--hybrid` (the usual 60: neither list dominates).
const HYBRID_RRF_K: f32 = 60.0;

fn semantic_search(
    a: &SearchArgs,
    query: &str,
    engine: &CodeSearch<'_>,
    snapshot: &IndexSnapshot,
    coverage: &Coverage,
) -> Result<ExitCode> {
    let semantic = snapshot.semantic_with(stored_embedder(snapshot)?)?;
    let limit = a.limit.unwrap_or(20);
    let hits = semantic.search(query, (limit * 4).max(50))?;
    let mut out = std::io::stdout().lock();
    let found = if a.semantic {
        let shown: Vec<&SemanticHit> = hits.iter().take(limit).collect();
        let names = symbol_names(snapshot, &shown);
        if a.json {
            let hs: Vec<serde_json::Value> = shown
                .iter()
                .zip(&names)
                .map(|(h, n)| {
                    serde_json::json!({ "path": h.path, "start_line": h.start_line,
                    "end_line": h.end_line, "symbol": n, "score": h.score })
                })
                .collect();
            let v = serde_json::json!({ "query": query, "mode": "semantic", "chunks_searched": semantic.chunks(),
                "hits": hs, "coverage": coverage });
            serde_json::to_writer_pretty(&mut out, &v)?;
            writeln!(out)?;
        } else {
            for (h, n) in shown.iter().zip(&names) {
                writeln!(
                    out,
                    "{}:{}-{}  {}  ({:.3})",
                    h.path,
                    h.start_line,
                    h.end_line,
                    n.as_deref().unwrap_or("-"),
                    h.score
                )?;
            }
        }
        !shown.is_empty()
    } else {
        let lexical = engine.search(query, SearchTarget::Files, limit * 2)?;
        let lex_files: Vec<String> = lexical
            .files
            .unwrap_or_default()
            .into_iter()
            .map(|f| f.path)
            .collect();
        let fused = fuse_files(&lex_files, &hits, HYBRID_RRF_K, limit);
        if a.json {
            let v = serde_json::json!({ "query": query, "mode": "hybrid", "rrf_k": HYBRID_RRF_K,
                "files": fused, "coverage": coverage });
            serde_json::to_writer_pretty(&mut out, &v)?;
            writeln!(out)?;
        } else {
            for f in &fused {
                let rank = |r: Option<usize>| r.map_or("-".to_string(), |r| r.to_string());
                let lines = f.lines.map_or(String::new(), |(s, e)| format!(":{s}-{e}"));
                writeln!(
                    out,
                    "{}{lines}  ({:.4}; lexical #{}, semantic #{})",
                    f.path,
                    f.score,
                    rank(f.lexical_rank),
                    rank(f.semantic_rank)
                )?;
            }
        }
        !fused.is_empty()
    };
    render::search_coverage_note(coverage, !found);
    Ok(if found {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Qualified names of the definitions owning each hit's chunk.
fn symbol_names(snapshot: &IndexSnapshot, hits: &[&SemanticHit]) -> Vec<Option<String>> {
    let ids: Vec<_> = hits.iter().filter_map(|h| snapshot.file_id(&h.path)).collect();
    let mut uniq = ids.clone();
    uniq.sort();
    uniq.dedup();
    let loaded = snapshot.load_symbols_of(&uniq).unwrap_or_default();
    hits.iter()
        .map(|h| {
            let id = snapshot.file_id(&h.path)?;
            let pos = uniq.iter().position(|u| *u == id)?;
            let record = snapshot.table.files.get(id.index())?;
            let d = loaded.get(pos)?.definitions.get(h.symbol? as usize)?;
            let sep = crate::graph::Family::of(&record.language).separator();
            Some(d.qualified_name(&record.module, sep))
        })
        .collect()
}

fn read_query(a: &SearchArgs) -> Result<String> {
    read_task(&a.query, a.query_file.as_deref())
}

/// Words from the command line, then a file's text (`-`: stdin).
pub(super) fn read_task(words: &[String], file: Option<&Path>) -> Result<String> {
    let mut q = words.join(" ");
    if let Some(f) = file {
        let text = if f.as_os_str() == "-" {
            std::io::read_to_string(std::io::stdin()).context("reading the query from stdin")?
        } else {
            std::fs::read_to_string(f).with_context(|| format!("cannot read query file {}", f.display()))?
        };
        if !q.is_empty() {
            q.push(' ');
        }
        q.push_str(&text);
    }
    if q.trim().is_empty() {
        anyhow::bail!("empty query: give QUERY words or --query-file FILE");
    }
    Ok(q)
}

fn search(a: SearchArgs) -> Result<ExitCode> {
    let query = read_query(&a)?;
    let (root, dir) = locate(a.repo.as_deref(), a.location.index_dir.clone())?;
    let snapshot = IndexSnapshot::open(&dir)?;
    let engine = CodeSearch::new(&snapshot, &root)?;
    let diff = Some(WorkingTreeDiff::quick(&root, &snapshot));
    let coverage = Coverage::of(&snapshot, diff.as_ref());
    let mut out = std::io::stdout().lock();
    let default_hybrid = !(a.lexical || a.literal || a.regex || a.files || a.symbols)
        && snapshot.manifest.parts.contains_key("vectors");
    if a.semantic || a.hybrid || default_hybrid {
        return semantic_search(&a, &query, &engine, &snapshot, &coverage);
    }
    let found = if a.literal || a.regex {
        let mode = if a.literal {
            LineSearchMode::Literal
        } else {
            LineSearchMode::Regex
        };
        let r = engine.lines(&query, mode, a.ignore_case, a.limit.unwrap_or(1000))?;
        if a.json {
            let v = serde_json::json!({ "query": query, "mode": if a.literal { "literal" } else { "regex" },
                "matches": r.matches, "files_searched": r.files_searched,
                "files_skipped_by_index": r.files_skipped_by_index, "coverage": coverage });
            serde_json::to_writer_pretty(&mut out, &v)?;
            writeln!(out)?;
        } else {
            render::line_matches(&mut out, &r.matches)?;
        }
        !r.matches.is_empty()
    } else {
        let target = match (a.files, a.symbols) {
            (true, _) => SearchTarget::Files,
            (_, true) => SearchTarget::Symbols,
            _ => SearchTarget::Mixed,
        };
        let limit = a.limit.unwrap_or(20);
        let r = match a.plain_bm25 {
            true => engine.search_files_plain(&query, limit)?,
            false => engine.search(&query, target, limit)?,
        };
        if a.json {
            let v = serde_json::json!({ "query": query, "terms": r.terms, "hits": r.hits, "files": r.files,
                "coverage": coverage });
            serde_json::to_writer_pretty(&mut out, &v)?;
            writeln!(out)?;
        } else {
            render::search_results(&mut out, &r)?;
        }
        !r.hits.is_empty()
    };
    render::search_coverage_note(&coverage, !found);
    Ok(if found {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
