//! The text a model reads of an answer: paths with spans, names and signatures, the code
//! itself where the answer carries it, one line of coverage. MCP sends it beside the whole
//! answer as `structuredContent` (the model is not sent it twice); the bundled agent puts
//! it in its prompts and tool results.

use serde_json::Value;

use super::Operation;

/// The answer `v` of `op`, written for a model.
pub fn render(op: Operation, v: &Value) -> String {
    body(op, v) + &footer(v, Footer::Whole)
}

/// The answer `v` of `op` within `budget` tokens (cl100k) as a model reads it. The footer
/// shrinks before the answer does: first the coverage line's detail goes, then the notes are shortened and the coverage cut to its generation,
/// then the notes and the coverage, then the next page's cursor. Only if the answer alone is
/// still over the budget is it cut, keeping its first (best) lines, with a short note that
/// says so; a first line too long to fit is cut at a word.
pub fn render_within(op: Operation, v: &Value, budget: usize) -> String {
    use crate::context::count_tokens;
    let body = body(op, v);
    for form in Footer::FORMS {
        let text = body.clone() + &footer(v, form);
        if count_tokens(&text) <= budget {
            return text;
        }
    }
    cut(&body, budget)
}

/// The answer itself, without the footer.
fn body(op: Operation, v: &Value) -> String {
    let mut out = String::new();
    match op {
        Operation::Search => search(v, &mut out),
        Operation::Callers | Operation::Callees | Operation::Refs if v["status"].as_str() == Some("ok") => {
            graph(v, &mut out)
        }
        Operation::Callers | Operation::Callees | Operation::Refs => candidates(v, &mut out),
        Operation::Symbol => symbols(v, &mut out),
        Operation::Context => context(v, &mut out),
        Operation::Impact => impact(&v["impact"], &mut out),
        Operation::ReadSpan => {
            out.push_str(&format!(
                "{}:{}-{}\n",
                s(&v["path"]),
                v["start_line"],
                v["end_line"]
            ));
            out.push_str(s(&v["text"]));
            if !out.ends_with('\n') {
                out.push('\n');
            }
        }
        Operation::Overview => {
            out.push_str(s(&v["markdown"]));
            out.push('\n');
        }
        _ => {
            let mut lean = v.clone();
            if let Value::Object(m) = &mut lean {
                for k in ["coverage", "generation", "notes", "page"] {
                    m.remove(k);
                }
            }
            prune(&mut lean);
            out.push_str(&lean.to_string());
            out.push('\n');
        }
    }
    out
}

/// The indexed files an answer names (every `path` in it, each once) and their size in
/// tokens, estimated as bytes / 4: what an agent would have read without the answer.
pub fn drawn_tokens(v: &Value, size_of: &dyn Fn(&str) -> Option<u64>) -> u64 {
    fn paths<'v>(v: &'v Value, out: &mut std::collections::BTreeSet<&'v str>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match (k.as_str(), x) {
                        ("path", Value::String(p)) => {
                            out.insert(p.as_str());
                        }
                        _ => paths(x, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| paths(x, out)),
            _ => {}
        }
    }
    let mut found = std::collections::BTreeSet::new();
    paths(v, &mut found);
    found.into_iter().filter_map(size_of).map(|bytes| bytes / 4).sum()
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn items(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

fn search(v: &Value, out: &mut String) {
    for f in items(&v["files"]) {
        let chunks = items(&f["chunks"]);
        if chunks.is_empty() {
            let line = match (&f["best"]["line"], &f["lines"]) {
                (Value::Number(n), _) => format!(":{n}"),
                (_, Value::Array(l)) if l.len() == 2 => format!(":{}-{}", l[0], l[1]),
                _ => String::new(),
            };
            out.push_str(&format!("{}{line}  {}\n", s(&f["path"]), s(&f["symbol"])));
            continue;
        }
        for (i, c) in chunks.iter().enumerate() {
            let place = match i {
                0 => s(&f["path"]).to_string(),
                _ => "  ".to_string(),
            };
            out.push_str(&format!(
                "{place}:{}-{}  {}\n",
                c["start_line"],
                c["end_line"],
                s(&c["symbol"])
            ));
        }
    }
    for h in items(&v["hits"]) {
        let name = h["qualified_name"].as_str().unwrap_or("(file)");
        out.push_str(&format!(
            "{}:{}-{}  {name}",
            s(&h["path"]),
            h["line"],
            h["end_line"]
        ));
        if let Some(sig) = h["signature"].as_str() {
            out.push_str(&format!("  {sig}"));
        }
        out.push('\n');
    }
    for c in items(&v["chunks"]) {
        out.push_str(&format!(
            "{}:{}-{}  {}\n",
            s(&c["path"]),
            c["start_line"],
            c["end_line"],
            s(&c["symbol"])
        ));
    }
    for m in items(&v["matches"]) {
        out.push_str(&format!("{}:{}: {}\n", s(&m["path"]), m["line"], s(&m["text"])));
    }
}

/// Callers, callees and refs: one line per definition reached, its place, and where it
/// calls (or uses) the target.
fn graph(v: &Value, out: &mut String) {
    let place = |d: &Value| format!("{}:{}-{}", s(&d["path"]), d["line"], d["end_line"]);
    let sites = |list: &[Value]| -> String {
        let lines: Vec<String> = list.iter().map(|x| format!("{}", x["line"])).collect();
        let kind = list.first().map_or("", |x| s(&x["kind"]));
        let confidence = list.first().map_or(Value::Null, |x| x["confidence"].clone());
        format!("{kind} at :{} (confidence {confidence})", lines.join(","))
    };
    for r in items(&v["reached"]) {
        out.push_str(&format!(
            "depth {}  {}  {}  {}\n",
            r["depth"],
            s(&r["symbol"]["qualified"]),
            place(&r["symbol"]),
            sites(items(&r["sites"]))
        ));
    }
    for r in items(&v["refs"]) {
        let site = &r["site"];
        out.push_str(&format!(
            "{}:{}  {} in {}  (confidence {})\n",
            s(&site["path"]),
            site["line"],
            s(&site["kind"]),
            r["from"]["qualified"].as_str().unwrap_or("(module)"),
            site["confidence"]
        ));
    }
    if v["truncated"] == Value::Bool(true) {
        out.push_str("truncated: more lie deeper or past the budget\n");
    }
}

/// The risk, what changed, what it reaches, and the tests to run, a line each.
fn impact(i: &Value, out: &mut String) {
    let reasons: Vec<&str> = items(&i["risk"]["reasons"]).iter().map(s).collect();
    out.push_str(&format!(
        "risk {}: {}\n",
        s(&i["risk"]["level"]),
        reasons.join("; ")
    ));
    for c in items(&i["changed"]) {
        out.push_str(&format!(
            "changed: {} ({}) {}:{}-{}\n",
            s(&c["qualified_name"]),
            s(&c["change"]),
            s(&c["path"]),
            c["start_line"],
            c["end_line"]
        ));
    }
    out.push_str(&format!(
        "dependents: {} direct, {} transitive\n",
        i["direct_dependents"], i["transitive_dependents"]
    ));
    for a in items(&i["affected"]) {
        out.push_str(&format!(
            "  {} {}:{} depth {}\n",
            s(&a["qualified_name"]),
            s(&a["path"]),
            a["line"],
            a["depth"]
        ));
    }
    let list = |key: &str, field: &str| -> Vec<String> {
        items(&i[key]).iter().map(|x| s(&x[field]).to_string()).collect()
    };
    for (label, names) in [
        ("files", list("affected_files", "path")),
        ("entry points", list("entry_points", "name")),
        ("tests", list("tests", "command")),
    ] {
        if !names.is_empty() {
            out.push_str(&format!("{label}: {}\n", names.join(", ")));
        }
    }
    let api: Vec<&str> = items(&i["public_api"]).iter().map(s).collect();
    if !api.is_empty() {
        out.push_str(&format!("public API: {}\n", api.join(", ")));
    }
    let commands: Vec<&str> = items(&i["test_commands"]).iter().map(s).collect();
    if !commands.is_empty() {
        out.push_str(&format!("run: {}\n", commands.join(" && ")));
    }
}

fn context(v: &Value, out: &mut String) {
    // The pack heads each file it shows and names the ranked files it left out; the line
    // here adds the next few ranked files beyond those.
    let pack = s(&v["pack"]["text"]);
    let more: Vec<&str> = items(&v["files"])
        .iter()
        .map(|f| s(&f["path"]))
        .filter(|p| !pack.contains(p))
        .take(RANKED_BEYOND)
        .collect();
    if !more.is_empty() {
        out.push_str(&format!("also ranked: {}\n\n", more.join(", ")));
    }
    out.push_str(pack);
    if !out.ends_with('\n') {
        out.push('\n');
    }
}

/// Ranked files named beyond those the pack shows or lists as left out.
const RANKED_BEYOND: usize = 5;

/// Candidates shown for an ambiguous name.
const CANDIDATES_SHOWN: usize = 10;

/// An ambiguous or unknown name: what it could mean, a line each.
fn candidates(v: &Value, out: &mut String) {
    let all = items(&v["candidates"]);
    match v["status"].as_str() {
        Some("ambiguous") => out.push_str(&format!(
            "{} names {} definitions; ask again with one of these (qualified name or path:line):\n",
            s(&v["query"]),
            all.len()
        )),
        _ => out.push_str(&format!("no definition named {}\n", s(&v["query"]))),
    }
    for c in all.iter().take(CANDIDATES_SHOWN) {
        out.push_str(&format!(
            "  {} {}  {}:{}\n",
            s(&c["kind"]),
            s(&c["qualified"]),
            s(&c["path"]),
            c["line"]
        ));
    }
    if all.len() > CANDIDATES_SHOWN {
        out.push_str(&format!("  ... and {} more\n", all.len() - CANDIDATES_SHOWN));
    }
}

/// Definitions: kind, qualified name and place, then the signature and the doc's first line.
fn symbols(v: &Value, out: &mut String) {
    let hits = items(&v["hits"]);
    if hits.is_empty() {
        out.push_str(&format!("no definition matches {}\n", s(&v["query"])));
    }
    for h in hits {
        out.push_str(&format!(
            "{} {}  {}:{}-{}\n",
            s(&h["kind"]),
            s(&h["qualified_name"]),
            s(&h["path"]),
            h["line"],
            h["end_line"]
        ));
        if let Some(sig) = h["signature"].as_str().filter(|x| !x.is_empty()) {
            out.push_str(&format!("  {sig}\n"));
        }
        if let Some(doc) = h["doc"]
            .as_str()
            .and_then(|d| d.lines().find(|l| !l.trim().is_empty()))
        {
            out.push_str(&format!("  {}\n", doc.trim()));
        }
    }
}

/// The first lines of `body` that fit `budget` with a note that the answer was cut; when not
/// even the first line fits, as many of its words as do.
fn cut(body: &str, budget: usize) -> String {
    use crate::context::count_tokens;
    let note = format!("note: cut to fit max_tokens {budget}\n");
    let lines: Vec<&str> = body.lines().collect();
    let with_lines = |n: usize| lines[..n].iter().map(|l| format!("{l}\n")).collect::<String>() + &note;
    let fits = |text: &str| count_tokens(text) <= budget;
    let n = most(lines.len(), |n| fits(&with_lines(n)));
    if n > 0 {
        return with_lines(n);
    }
    let first = lines.first().copied().unwrap_or("");
    let words: Vec<&str> = first.split(' ').collect();
    let with_words = |n: usize| format!("{} …\n{note}", words[..n].join(" "));
    let n = most(words.len(), |n| fits(&with_words(n)));
    if n > 0 {
        return with_words(n);
    }
    // Not even the note fits: as much of it as does.
    let words: Vec<&str> = note.trim_end().split(' ').collect();
    let with_note_words = |n: usize| words[..n].join(" ") + "\n";
    with_note_words(most(words.len(), |n| fits(&with_note_words(n))))
}

/// The largest `n` in `0..=max` for which `fits(n)` holds, `fits` holding for every smaller
/// `n` too (by bisection: token counts grow with what is kept).
fn most(max: usize, fits: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0usize, max);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        match fits(mid) {
            true => lo = mid,
            false => hi = mid - 1,
        }
    }
    lo
}

/// How much of the footer (notes, the next page, what the index covered) an answer carries,
/// from all of it to none: the order in which it shrinks to leave room for the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Footer {
    Whole,
    /// The coverage line without its languages and files not read.
    Counts,
    /// Each note to its first words, the coverage to its generation and size.
    Short,
    /// Only the next page's cursor.
    Cursor,
    Nothing,
}

impl Footer {
    const FORMS: [Footer; 5] = [
        Footer::Whole,
        Footer::Counts,
        Footer::Short,
        Footer::Cursor,
        Footer::Nothing,
    ];
}

/// Words a note keeps in the short footer.
const NOTE_WORDS: usize = 10;

/// Notes, the next page, and what the index covered, one line each, in `form`.
fn footer(v: &Value, form: Footer) -> String {
    let mut out = String::new();
    for n in items(&v["notes"]) {
        let note = s(n);
        match form {
            Footer::Whole | Footer::Counts => out.push_str(&format!("note: {note}\n")),
            Footer::Short => {
                let words: Vec<&str> = note.split_whitespace().collect();
                let more = if words.len() > NOTE_WORDS { " …" } else { "" };
                let first = words[..words.len().min(NOTE_WORDS)].join(" ");
                out.push_str(&format!("note: {first}{more}\n"));
            }
            Footer::Cursor | Footer::Nothing => {}
        }
    }
    if form != Footer::Nothing
        && let Some(c) = v["page"]["next_cursor"].as_str()
    {
        out.push_str(&format!("more: cursor \"{c}\"\n"));
    }
    let c = &v["coverage"];
    if c.is_object() && matches!(form, Footer::Whole | Footer::Counts | Footer::Short) {
        out.push_str(&coverage(c, form));
        out.push('\n');
    }
    out
}

/// The coverage line: generation, files, staleness and damage; in the whole form also the
/// languages read and the most common files not read; in the short form the generation and
/// the files indexed (and those stale) alone.
fn coverage(c: &Value, form: Footer) -> String {
    let stale = c["stale"].as_u64().filter(|n| *n > 0);
    if form == Footer::Short {
        let mut line = format!(
            "coverage: generation {}, {} files",
            c["generation"], c["files_indexed"]
        );
        if let Some(stale) = stale {
            line.push_str(&format!(", {stale} stale"));
        }
        return line;
    }
    let mut line = format!(
        "coverage: generation {}, {} files indexed, {} skipped, {} with errors",
        c["generation"], c["files_indexed"], c["files_skipped"], c["files_with_errors"]
    );
    if let Some(stale) = stale {
        line.push_str(&format!(", {stale} stale"));
    }
    if form == Footer::Whole {
        line.push_str(&languages(c));
    }
    let later: Vec<&str> = items(&c["not_built_yet"]).iter().map(s).collect();
    if !later.is_empty() {
        line.push_str(&format!("; not built yet: {}", later.join(", ")));
    }
    let damaged: Vec<&str> = items(&c["damaged"]).iter().map(s).collect();
    match (form, damaged.is_empty()) {
        (_, true) => {}
        (Footer::Whole, false) => line.push_str(&format!(", damaged: {}", damaged.join("; "))),
        (_, false) => line.push_str(&format!(", {} damaged", damaged.len())),
    }
    line
}

/// The languages read, read as text, and the most common files not read, for the coverage line.
fn languages(c: &Value) -> String {
    let mut line = String::new();
    if let Some(langs) = c["languages"].as_object().filter(|m| !m.is_empty()) {
        let read: Vec<String> = langs.iter().map(|(l, n)| format!("{l} {n}")).collect();
        line.push_str(&format!("; read: {}", read.join(", ")));
    }
    if let Some(text) = c["read_as_text"].as_object().filter(|m| !m.is_empty()) {
        let read: Vec<String> = text.iter().map(|(l, n)| format!("{l} {n}")).collect();
        line.push_str(&format!("; as text: {}", read.join(", ")));
    }
    if let Some(unread) = c["not_read"].as_object().filter(|m| !m.is_empty()) {
        // The three most common, and what is left as one count.
        let mut v: Vec<(&String, u64)> = unread.iter().map(|(k, n)| (k, n.as_u64().unwrap_or(0))).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let mut parts: Vec<String> = v
            .iter()
            .take(3)
            .map(|(k, n)| match k.as_str() {
                "" => format!("{n} without extension"),
                "other" => format!("{n} other"),
                k => format!("{n} .{k}"),
            })
            .collect();
        let rest: u64 = v.iter().skip(3).map(|(_, n)| n).sum();
        if rest > 0 {
            parts.push(format!("{rest} other"));
        }
        line.push_str(&format!("; not read: {}", parts.join(", ")));
    }
    line
}

/// Drops what says nothing: nulls, `false`, empty strings, lists and objects.
fn prune(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.values_mut().for_each(prune);
            m.retain(|_, x| !empty(x));
        }
        Value::Array(a) => a.iter_mut().for_each(prune),
        _ => {}
    }
}

fn empty(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn search_answers_read_as_spans_with_the_coverage_line() {
        let v = json!({
            "mode": "hybrid", "files": [{"path": "a.py", "symbol": "a.f", "chunks": [
                {"start_line": 3, "end_line": 9, "symbol": "a.f", "by": "lexical"},
                {"start_line": 20, "end_line": 24, "symbol": "a.g", "by": "semantic"}]}],
            "hits": [], "chunks": [], "matches": [], "notes": ["cut"],
            "page": {"next_cursor": "c2"},
            "coverage": {"generation": 4, "files_indexed": 10, "files_skipped": 1, "files_with_errors": 0,
                         "stale": 2, "damaged": []}
        });
        let text = render(Operation::Search, &v);
        assert_eq!(
            text,
            "a.py:3-9  a.f\n  :20-24  a.g\nnote: cut\nmore: cursor \"c2\"\n\
             coverage: generation 4, 10 files indexed, 1 skipped, 0 with errors, 2 stale\n"
        );
    }

    #[test]
    fn the_coverage_line_names_languages_read_and_the_most_common_files_not_read() {
        let v = json!({"symbol": "x", "n": 1,
                       "coverage": {"generation": 3, "files_indexed": 25, "files_skipped": 61, "files_with_errors": 0,
                                    "languages": {"kotlin": 20, "bash": 5}, "read_as_text": {"markdown": 4},
                                    "not_read": {"md": 30, "yml": 12, "": 9, "png": 4, "other": 6}}});
        let text = render(Operation::Deps, &v);
        assert!(
            text.ends_with(
                "coverage: generation 3, 25 files indexed, 61 skipped, 0 with errors; read: bash 5, kotlin 20; \
                 as text: markdown 4; not read: 30 .md, 12 .yml, 9 without extension, 10 other\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn other_answers_are_compact_json_without_empty_fields() {
        let v = json!({"symbol": "x", "callers": [], "status": "ok", "ambiguous": false, "n": 0,
                       "coverage": {"generation": 1, "files_indexed": 2, "files_skipped": 0, "files_with_errors": 0}});
        let text = render(Operation::Deps, &v);
        assert!(
            text.starts_with("{\"n\":0,\"status\":\"ok\",\"symbol\":\"x\"}\n"),
            "{text}"
        );
        assert!(text.ends_with("coverage: generation 1, 2 files indexed, 0 skipped, 0 with errors\n"));
    }

    #[test]
    fn the_files_an_answer_draws_from_are_counted_once() {
        let v = json!({"files": [{"path": "a.py", "chunks": []}, {"path": "b.py"}],
                       "hits": [{"path": "a.py"}], "pack": {"shown": [{"path": "c.py"}]}});
        let size = |p: &str| match p {
            "a.py" => Some(400),
            "b.py" => Some(40),
            _ => None,
        };
        assert_eq!(drawn_tokens(&v, &size), 110);
    }

    #[test]
    fn callers_read_as_one_line_per_definition_reached() {
        let v = json!({"status": "ok", "reached": [{"depth": 1,
            "symbol": {"qualified": "m.C.f", "path": "m.py", "line": 3, "end_line": 9},
            "sites": [{"path": "m.py", "line": 5, "kind": "calls", "confidence": 0.9},
                      {"path": "m.py", "line": 7, "kind": "calls", "confidence": 0.9}]}],
            "truncated": false});
        assert_eq!(
            render(Operation::Callers, &v),
            "depth 1  m.C.f  m.py:3-9  calls at :5,7 (confidence 0.9)\n"
        );
        // An ambiguous name lists what it could mean, a line each.
        let v = json!({"status": "ambiguous", "query": "f", "candidates": [
            {"kind": "function", "qualified": "a.f", "path": "a.py", "line": 1},
            {"kind": "method", "qualified": "b.C.f", "path": "b.py", "line": 7}]});
        assert_eq!(
            render(Operation::Callers, &v),
            "f names 2 definitions; ask again with one of these (qualified name or path:line):\n  function a.f  a.py:1\n  method b.C.f  b.py:7\n"
        );
    }

    #[test]
    fn definitions_read_as_place_signature_and_doc() {
        let v = json!({"query": "Cart", "hits": [{"kind": "class", "qualified_name": "shop.cart.Cart",
            "path": "shop/cart.py", "line": 4, "end_line": 20, "signature": "class Cart:",
            "doc": "\nA shopping cart.\nMore."}]});
        assert_eq!(
            render(Operation::Symbol, &v),
            "class shop.cart.Cart  shop/cart.py:4-20\n  class Cart:\n  A shopping cart.\n"
        );
    }

    fn tokens(text: &str) -> usize {
        crate::context::count_tokens(text)
    }

    /// A search answer of `files` files, with two notes, a next page and a full coverage.
    fn search_answer(files: usize) -> Value {
        let files: Vec<Value> = (0..files)
            .map(|i| {
                json!({"path": format!("src/module_{i}.py"), "symbol": format!("m{i}.f"),
                            "chunks": [{"start_line": 3, "end_line": 9, "symbol": format!("m{i}.f")}]})
            })
            .collect();
        json!({"files": files, "notes": [
                "the semantic index is not built yet: these results are lexical only, ranked by BM25",
                "a document answers this better than any code: README.md:1-40"],
               "page": {"next_cursor": "p3"},
               "coverage": {"generation": 12, "files_indexed": 4000, "files_skipped": 310, "files_with_errors": 2,
                            "languages": {"python": 3000, "rust": 600, "typescript": 400},
                            "read_as_text": {"markdown": 120, "toml": 40},
                            "not_read": {"json": 200, "png": 90, "lock": 10, "": 5, "other": 5}}})
    }

    #[test]
    fn within_its_budget_an_answer_is_the_whole_rendering() {
        let v = search_answer(3);
        assert_eq!(
            render_within(Operation::Search, &v, 100_000),
            render(Operation::Search, &v)
        );
    }

    #[test]
    fn a_small_budget_shrinks_the_footer_before_the_answer() {
        let v = search_answer(3);
        let whole = render(Operation::Search, &v);
        let body_lines = 3;
        let mut seen = Vec::new();
        for budget in (50..tokens(&whole)).step_by(5) {
            let text = render_within(Operation::Search, &v, budget);
            assert!(tokens(&text) <= budget, "{budget}: {text}");
            let kept = text.lines().filter(|l| l.starts_with("src/module_")).count();
            // Every line of the answer stays while any of the footer does.
            if text.contains("coverage: ") || text.contains("more: ") || text.contains("note: the") {
                assert_eq!(kept, body_lines, "{budget}: {text}");
            }
            seen.push(text);
        }
        // The footer's forms all show up on the way down, the smallest keeping the cursor.
        assert!(
            seen.iter()
                .any(|t| t.contains("files indexed, 310 skipped, 2 with errors\n"))
        );
        assert!(
            seen.iter()
                .any(|t| t.contains("coverage: generation 12, 4000 files\n"))
        );
        assert!(
            seen.iter()
                .any(|t| t.contains("note: the semantic index is not built yet: these results are …\n"))
        );
        assert!(
            seen.iter()
                .any(|t| t.ends_with("src/module_2.py:3-9  m2.f\nmore: cursor \"p3\"\n"))
        );
    }

    #[test]
    fn an_answer_over_its_budget_keeps_its_first_lines_and_says_it_was_cut() {
        let v = search_answer(200);
        for budget in [50, 60, 100, 120, 400] {
            let text = render_within(Operation::Search, &v, budget);
            assert!(tokens(&text) <= budget, "{budget}: {text}");
            assert!(
                text.starts_with("src/module_0.py:3-9  m0.f\nsrc/module_1.py:3-9  m1.f\n"),
                "{text}"
            );
            assert!(
                text.ends_with(&format!("\nnote: cut to fit max_tokens {budget}\n")),
                "{text}"
            );
        }
    }

    #[test]
    fn a_first_line_too_long_for_the_budget_is_cut_at_a_word() {
        let long: String = (0..200).map(|i| format!("word{i} ")).collect();
        let v = json!({"path": "a.txt", "start_line": 1, "end_line": 1, "text": long});
        let text = render_within(Operation::ReadSpan, &v, 60);
        assert!(tokens(&text) <= 60, "{text}");
        let text = render_within(Operation::Overview, &json!({"markdown": long}), 60);
        assert!(tokens(&text) <= 60, "{text}");
        assert!(text.starts_with("word0 word1 word2 "), "{text}");
        assert!(text.ends_with(" …\nnote: cut to fit max_tokens 60\n"), "{text}");
        assert!(tokens(&cut(&long, 3)) <= 3);
    }
}
