//! Runs a parsed command line: arguments become a request to the query layer (`api`), the
//! response is printed as JSON (exactly what a server returns) or rendered for people.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};

use super::args::{
    AuditCommand, BuildArgs, Cli, Command, EmbedderKind, FleetCommand, GraphCommand, IndexCommand,
    ReadSpanArgs, SearchArgs, StatusArgs, SymbolArgs, VerifyArgs,
};
use super::progress::ProgressBars;
use super::render;
use super::shared::{cli_error, exit_found, open, print_json, read_task};
use super::{
    agent_commands, audit_commands, context_commands, exec_commands, fleet_commands, graph_commands,
    impact_commands, remote_commands, serve_commands,
};
use crate::api::Workspace;
use crate::api::{
    BuildPlan, EmbedderChoice, IndexStatusRequest, ReadSpanRequest, SearchMode, SearchRequest, SymbolRequest,
};
use crate::index::{CHECKPOINT_MIN_BYTES, IndexConfig, IndexVerifier, WalkConfig};
use crate::providers::{self, EmbedApi, EmbedderSettings, HttpEmbedder};

pub fn run(cli: Cli) -> Result<ExitCode> {
    let quiet = cli.quiet;
    match cli.command {
        Command::Index(IndexCommand::Build(a)) => build(a, quiet),
        Command::Index(IndexCommand::Status(a)) => status(a),
        Command::Index(IndexCommand::Verify(a)) => verify(a),
        Command::Index(IndexCommand::Push(a)) => remote_commands::push(a),
        Command::Index(IndexCommand::Pull(a)) => remote_commands::pull(a, quiet),
        Command::Audit(AuditCommand::Verify(a)) => audit_commands::verify(a),
        Command::Audit(AuditCommand::Show(a)) => audit_commands::show(a),
        Command::Exec(a) => exec_commands::exec(a),
        Command::Agent(a) => agent_commands::agent(*a),
        Command::Symbol(a) => symbol(a),
        Command::Search(a) => search(a),
        Command::Context(a) => context_commands::context(a),
        Command::RankFeatures(a) => context_commands::rank_features(a),
        Command::Ask(a) => context_commands::ask(a),
        Command::Overview(a) => context_commands::overview(a),
        Command::Impact(a) => impact_commands::impact(a),
        Command::Callers(a) => graph_commands::calls(a, crate::api::CallDirection::Callers),
        Command::Callees(a) => graph_commands::calls(a, crate::api::CallDirection::Callees),
        Command::Refs(a) => graph_commands::refs(a),
        Command::Deps(a) => graph_commands::deps(a),
        Command::Graph(GraphCommand::Stats(a)) => graph_commands::stats(a),
        Command::ReadSpan(a) => read_span(a),
        Command::Serve(a) => serve_commands::serve(a, quiet),
        Command::Install(a) => super::install_commands::install(a),
        Command::Uninstall(a) => super::install_commands::uninstall(a),
        Command::Worker(a) => fleet_commands::worker(a),
        Command::Fleet(FleetCommand::Enqueue(a)) => fleet_commands::enqueue(a),
        Command::Fleet(FleetCommand::Status(a)) => fleet_commands::status(a),
        Command::Fleet(FleetCommand::Search(a)) => fleet_commands::search(a),
        Command::Fleet(FleetCommand::Call(a)) => fleet_commands::call(a),
    }
}

fn build(a: BuildArgs, quiet: bool) -> Result<ExitCode> {
    let mut walk = WalkConfig::default();
    if let Some(n) = a.max_file_size {
        walk.max_file_size = n;
    }
    if let Some(ms) = a.max_parse_ms {
        walk.max_parse_ms = ms;
    }
    if let Some(n) = a.max_tree_nodes {
        walk.max_tree_nodes = n;
    }
    walk.follow_symlinks = a.follow_symlinks;
    walk.text = !a.no_text;
    let (max_memory_mib, max_memory_from) = IndexConfig::memory_cap(a.max_memory);
    let config = IndexConfig {
        walk,
        index_dir: a.location.index_dir.clone(),
        threads: a.threads,
        full: a.full,
        lexical: !a.no_lexical,
        graph: !a.no_graph,
        vectors: !a.no_semantic,
        history: !a.no_history,
        first_stage: a.quick,
        max_memory_mib,
        max_memory_from,
        checkpoint_min_bytes: match a.no_checkpoints {
            true => None,
            false => Some(a.checkpoint_min_bytes.unwrap_or(CHECKPOINT_MIN_BYTES)),
        },
    };
    let progress = ProgressBars::new(quiet || !std::io::stderr().is_terminal());
    let embedder = match config.vectors && !config.first_stage {
        true => build_embedder(&a)?,
        false => EmbedderChoice::Stored,
    };
    let plan = BuildPlan::new(&a.path, config).with_embedder(embedder);
    let builder = plan
        .builder(&progress)
        .with_context(|| format!("cannot index {}", a.path.display()))?;
    let report = builder
        .build()
        .with_context(|| format!("indexing {} failed", builder.root().display()))?;
    if a.json {
        print_json(&report)?;
    } else {
        render::build_report(&mut std::io::stdout().lock(), &report)?;
    }
    for d in &report.repairs {
        eprintln!(
            "warning: {} was damaged ({}); rebuilt from the source files",
            d.path, d.detail
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn verify(a: VerifyArgs) -> Result<ExitCode> {
    let (_, dir) = Workspace::locate(a.path.as_deref(), a.location.index_dir).map_err(cli_error)?;
    let report = IndexVerifier::verify(&dir, true)?;
    if a.json {
        print_json(&report)?;
    } else {
        let mut out = std::io::stdout().lock();
        let checked: Vec<String> = report.checked.iter().map(|(k, n)| format!("{n} {k}")).collect();
        match (report.generation, report.damage.is_empty()) {
            (None, true) => writeln!(out, "{}: no generation committed yet", report.index_dir)?,
            (g, true) => writeln!(
                out,
                "{} generation {}: intact ({} checked)",
                report.index_dir,
                g.unwrap_or(0),
                checked.join(", ")
            )?,
            (g, false) => {
                writeln!(
                    out,
                    "{} generation {}: {} damaged file(s); `ken index build` rebuilds them from the source files",
                    report.index_dir,
                    g.map_or("?".to_string(), |g| g.to_string()),
                    report.damage.len()
                )?;
                for d in &report.damage {
                    writeln!(out, "  {:<9} {}: {}", d.part, d.path, d.detail)?;
                }
            }
        }
    }
    Ok(match report.damage.is_empty() {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    })
}

/// The model a build embeds with: the one asked for, else the one the index was built with.
fn build_embedder(a: &BuildArgs) -> Result<EmbedderChoice> {
    let api = match a.embedder {
        Some(EmbedderKind::Builtin) => return Ok(EmbedderChoice::Given(None)),
        Some(EmbedderKind::Openai) => EmbedApi::Openai,
        Some(EmbedderKind::Ollama) => EmbedApi::Ollama,
        Some(EmbedderKind::Minilm) => return Ok(EmbedderChoice::Given(Some(providers::minilm()?))),
        None => {
            if a.embed_url.is_some() || a.embed_model.is_some() || a.embed_key_env.is_some() {
                anyhow::bail!("--embed-url, --embed-model and --embed-key-env need --embedder openai|ollama");
            }
            // Keep the previous build's model (a missing or unreadable index: the built-in one).
            return Ok(EmbedderChoice::Stored);
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
    Ok(EmbedderChoice::Given(Some(Arc::new(e))))
}

fn status(a: StatusArgs) -> Result<ExitCode> {
    let ws = open(a.path.as_deref(), a.location.index_dir)?;
    let r = ws
        .index_status(&IndexStatusRequest {
            details: a.details,
            max_tokens: None,
        })
        .map_err(cli_error)?;
    match a.json {
        true => print_json(&r)?,
        false => render::status(&mut std::io::stdout().lock(), &r, a.details)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn symbol(a: SymbolArgs) -> Result<ExitCode> {
    let ws = open(a.repo.as_deref(), a.location.index_dir)?;
    let r = ws
        .analysis()
        .symbol(&SymbolRequest {
            name: a.name.clone(),
            limit: Some(a.limit),
            max_tokens: None,
            cursor: None,
        })
        .map_err(cli_error)?;
    match a.json {
        true => print_json(&r)?,
        false => render::symbol_hits(&mut std::io::stdout().lock(), &r.hits, r.page.total)?,
    }
    render::coverage_note(&r.coverage, r.hits.is_empty(), &a.name);
    Ok(exit_found(!r.hits.is_empty()))
}

fn search(a: SearchArgs) -> Result<ExitCode> {
    crate::api::prepare_for_a_query();
    let query = read_task(&a.query, a.query_file.as_deref())?;
    let ws = open(a.repo.as_deref(), a.location.index_dir.clone())?;
    let analysis = ws.analysis();
    // `--files` keeps the ranking and drops the spans; the lexical file ranking is what
    // `--lexical --files` asks for, and all there is without a semantic part.
    let lexical_files = a.files && (a.lexical || !(a.hybrid || analysis.has_semantic()));
    let mode = if a.semantic {
        Some(SearchMode::Semantic)
    } else if a.hybrid {
        Some(SearchMode::Hybrid)
    } else if a.literal {
        Some(SearchMode::Literal)
    } else if a.regex {
        Some(SearchMode::Regex)
    } else if lexical_files {
        Some(SearchMode::Files)
    } else if a.symbols {
        Some(SearchMode::Symbols)
    } else if a.lexical {
        Some(SearchMode::Lexical)
    } else {
        None
    };
    let r = analysis
        .search(&SearchRequest {
            query,
            mode,
            ignore_case: a.ignore_case,
            limit: a.limit,
            max_tokens: None,
            cursor: None,
            plain_bm25: a.plain_bm25,
            chunks_per_file: Some(if a.files { 0 } else { usize::from(a.per_file) }),
            ranker: a.ranker.clone(),
            without: a.without.clone(),
        })
        .map_err(cli_error)?;
    let found = !(r.hits.is_empty() && r.files.is_empty() && r.chunks.is_empty() && r.matches.is_empty());
    match a.json {
        true => print_json(&r)?,
        false => render::search_response(&mut std::io::stdout().lock(), &r)?,
    }
    for n in &r.notes {
        eprintln!("note: {n}");
    }
    render::search_coverage_note(&r.coverage, !found);
    Ok(exit_found(found))
}

fn read_span(a: ReadSpanArgs) -> Result<ExitCode> {
    let ws = open(a.at.repo.as_deref(), a.at.location.index_dir.clone())?;
    let r = ws
        .analysis()
        .read_span(&ReadSpanRequest {
            span: a.span.clone(),
            max_tokens: None,
            ignored: a.ignored,
        })
        .map_err(cli_error)?;
    if a.at.json {
        print_json(&r)?;
    } else {
        let mut out = std::io::stdout().lock();
        for (i, line) in r.text.lines().enumerate() {
            writeln!(out, "{:>6}  {line}", r.start_line as usize + i)?;
        }
    }
    if r.changed_since_index {
        eprintln!("note: {} changed since the index was built", r.path);
    }
    Ok(ExitCode::SUCCESS)
}
