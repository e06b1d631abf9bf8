//! Query latency of `ken search` on an indexed tree, for `benches/search_corpus.sh`.
//!
//! `cargo run --release --example search_latency -- ROOT DEV_JSONL [IDENTIFIERS]`
//!
//! Runs, in process and after one warm-up pass: identifier lookups (definition names sampled
//! evenly from the index), the issue texts of the dev set as whole queries, and literal line
//! searches for the same identifiers; prints p50/p95/max per kind. With `RG=path/to/rg` it also
//! times `rg -F -n` for the literal queries on the same tree.

use std::path::Path;
use std::time::{Duration, Instant};

use kenning::index::{CodeSearch, IndexSnapshot, SearchTarget};
use kenning::lexical::LineSearchMode;

fn percentiles(mut d: Vec<Duration>) -> String {
    d.sort();
    let p = |q: f64| d[((d.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1000.0;
    format!(
        "n={:4}  p50 {:8.2} ms  p95 {:8.2} ms  max {:8.2} ms",
        d.len(),
        p(0.5),
        p(0.95),
        p(1.0)
    )
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(root), Some(dev)) = (args.first(), args.get(1)) else {
        anyhow::bail!("usage: search_latency ROOT DEV_JSONL [IDENTIFIERS]");
    };
    let n_ids: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(200);
    let root = Path::new(root).canonicalize()?;
    let snapshot = IndexSnapshot::open(&root.join(".kenning"))?;
    let search = CodeSearch::new(&snapshot, &root)?;

    let symbols = snapshot.load_symbols()?;
    let mut names: Vec<String> = symbols
        .iter()
        .flat_map(|s| s.definitions.iter().map(|d| d.name.clone()))
        .filter(|n| n.len() >= 4)
        .collect();
    names.sort();
    names.dedup();
    let step = (names.len() / n_ids.max(1)).max(1);
    let ids: Vec<String> = names.into_iter().step_by(step).take(n_ids).collect();
    let issues: Vec<String> = std::fs::read_to_string(dev)?
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["query"].as_str().map(str::to_string))
        .collect();

    let time = |f: &dyn Fn(&str) -> anyhow::Result<()>, qs: &[String]| -> anyhow::Result<Vec<Duration>> {
        for q in qs.iter().take(20) {
            f(q)?; // warm-up: page cache and mmap
        }
        qs.iter()
            .map(|q| {
                let t = Instant::now();
                f(q)?;
                Ok(t.elapsed())
            })
            .collect()
    };
    let ranked = |q: &str| {
        search
            .search(q, SearchTarget::Mixed, 20)
            .map(|_| ())
            .map_err(Into::into)
    };
    let files = |q: &str| {
        search
            .search(q, SearchTarget::Files, 20)
            .map(|_| ())
            .map_err(Into::into)
    };
    let literal = |q: &str| {
        search
            .lines(q, LineSearchMode::Literal, false, 1000)
            .map(|_| ())
            .map_err(Into::into)
    };
    println!("identifier queries   {}", percentiles(time(&ranked, &ids)?));
    println!("issue-text queries   {}", percentiles(time(&ranked, &issues)?));
    println!("issue-text --files   {}", percentiles(time(&files, &issues)?));
    println!("literal (ken)        {}", percentiles(time(&literal, &ids)?));
    if let Ok(rg) = std::env::var("RG") {
        let run_rg = |q: &str| -> anyhow::Result<()> {
            std::process::Command::new(&rg)
                .args(["-F", "-n", "--no-heading", "-e", q])
                .current_dir(&root)
                .output()?;
            Ok(())
        };
        println!("literal (rg -F)      {}", percentiles(time(&run_rg, &ids)?));
    }
    Ok(())
}
