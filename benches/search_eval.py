#!/usr/bin/env python3
"""File-level search quality on the hand-built set in benches/search_set/.

    benches/search_eval.py --ken target/release/ken --corpora /work/corpora [--set benches/search_set]
                           [--modes search,lexical,context] [--langs rust,go] [--out results.json]

Every query line of `<set>/<language>.jsonl` names a repository, the commit its answers were
read at, the query and its relevant files graded 2 (where the answer lives) or 1 (secondary).
Each repository is checked out at that commit from `<corpora>/<owner>+<name>` (a clone; a
detached worktree is made under `<corpora>/.eval/`), indexed once with `ken index build`, and
every query runs through each mode:

  search   `ken search --json` (the default ranking: hybrid when the index has vectors), its files
  semantic `ken search --semantic --json`: files in the order of their best chunk (the model alone)
  lexical  `ken search --lexical --files --json` (the lexical file ranking over the same index)
  bm25     `ken search --lexical --files --plain-bm25 --json` (plain whole-file BM25: the floor)
  search-fused `ken search --ranker fused --json`: the fallback ranking (reciprocal rank fusion)
  search-without-<signal>  `ken search --without <signal>`: the default ranking less one signal
           (semantic, path-evidence, set-aside, exact-definitions), for the ablation
  context-without-<signal>  `ken context --signals <all but one>` (lexical, semantic, mentions, definitions, paths, modules,
           graph, prior, history), and context-fused (`--ranker fused`, no learned stage)
  context  `ken context --format json`, its ranked files

Reported per mode, per language and per category: NDCG@10 with gains 2^grade - 1, Recall@10
(relevant files found in the top 10), MRR (first relevant file), the number of test or
example files in the top 10 of queries that do not ask for them, and each mode's whole-process
latency (p50, p90). With `--budgets 1000,2000,4000,8000`, also recall against tokens: for each
`ken context --budget B`, the share of grade-2 files whose code is packed and of grade-2 line
spans a packed span overlaps; and the same for `ken search`'s chunks read in order (the answer's
spans, best file first) until B tokens of code are read (tokens estimated as bytes / 4); and
for the baseline without an index: `git grep` the query's words, then read whole files, most
matching lines first, while they fit in B tokens.
Nothing here is tuned on: the set is for measuring.
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict

TEST = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec|specs|examples?|benches|benchmarks?|fixtures?|testdata)/"
    r"|(^|/)test_[^/]*$|_tests?\.[a-z]+$|\.(test|spec)\.[jt]sx?$|Test\.java$|(^|/)conftest\.py$"
)


def run(cmd, cwd=None):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace")


def checkout(corpora, repo, commit):
    src = os.path.join(corpora, repo.replace("/", "+"))
    # The clone itself when it is at that commit (a partial clone may not check out again).
    if run(["git", "-C", src, "rev-parse", "HEAD"]).stdout.strip() == commit:
        return src
    dest = os.path.join(corpora, ".eval", repo.replace("/", "+") + "@" + commit[:12])
    if not os.path.isdir(dest):
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        r = run(["git", "-C", src, "worktree", "add", "--detach", "-f", dest, commit])
        if r.returncode != 0:
            raise SystemExit(f"cannot check out {repo}@{commit}: {r.stderr}")
    return dest


def ranked_files(ken, mode, query, cwd):
    """The ranked files and the call's wall time in milliseconds (one whole process)."""
    t0 = time.perf_counter()
    files = ranked_files_untimed(ken, mode, query, cwd)
    return files, (time.perf_counter() - t0) * 1000


def packed(ken, query, cwd, budget):
    """What `ken context --budget B` shows: the packed spans and the answer's tokens."""
    r = run([ken, "context", "--format", "json", "--budget", str(budget), "--", query], cwd)
    try:
        out = json.loads(r.stdout)
    except json.JSONDecodeError:
        return [], 0
    return out["pack"]["shown"], out["pack"]["tokens"]


def search_chunks(ken, query, cwd):
    """`ken search`'s spans in answer order: (path, start, end), best file first."""
    r = run([ken, "search", "--json", "--limit", "20", "--", query], cwd)
    try:
        out = json.loads(r.stdout)
    except json.JSONDecodeError:
        return []
    return [(f["path"], c["start_line"], c["end_line"]) for f in out.get("files", []) for c in f.get("chunks", [])]


def read_within(chunks, cwd, budget):
    """The chunks an agent reads in order within `budget` tokens of code (bytes / 4)."""
    shown, used = [], 0
    for path, start, end in chunks:
        try:
            with open(os.path.join(cwd, path), errors="replace") as f:
                lines = f.read().splitlines()[start - 1:end]
        except OSError:
            continue
        cost = max(1, sum(len(l) + 1 for l in lines) // 4)
        if used + cost > budget:
            break
        used += cost
        shown.append({"path": path, "start_line": start, "end_line": end})
    return shown, used


STOP = set("the and for with from that this what when where which how does into are is was has have not its it of to in on by an a or be do can".split())


def grep_and_read(query, cwd, budget):
    """The baseline an agent without an index has: `git grep` the query's words, then read
    whole files, most matching lines first, until `budget` tokens (bytes / 4)."""
    words = sorted({w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", query)} - STOP)
    if not words:
        return [], 0
    args = ["git", "-C", cwd, "grep", "-I", "-i", "-c"]
    for w in words:
        args += ["-e", w]
    r = run(args)
    counts = []
    for line in r.stdout.splitlines():
        path, _, n = line.rpartition(":")
        if n.isdigit():
            counts.append((-int(n), path))
    shown, used = [], 0
    for _, path in sorted(counts):
        try:
            size = os.path.getsize(os.path.join(cwd, path))
        except OSError:
            continue
        cost = max(1, size // 4)
        if used + cost > budget:
            continue
        used += cost
        shown.append({"path": path, "start_line": 1, "end_line": 10**9})
    return shown, used


def pack_recall(shown, q):
    """Grade-2 files with code shown, and grade-2 spans overlapped by a shown span."""
    gold = [r for r in q["relevant"] if r["grade"] == 2]
    files = sum(1 for g in gold if any(s["path"] == g["path"] for s in shown)) / len(gold)
    spans = [g for g in gold if g.get("lines")]
    hit = sum(
        1 for g in spans
        if any(s["path"] == g["path"] and s["start_line"] <= g["lines"][1] and s["end_line"] >= g["lines"][0] for s in shown)
    )
    return files, (hit / len(spans) if spans else None)


CONTEXT_SIGNALS = ["lexical", "semantic", "mentions", "definitions", "paths", "modules", "graph", "prior", "history"]


def mode_command(ken, mode):
    if mode == "context":
        return [ken, "context", "--format", "json", "--files", "10"]
    if mode == "context-fused":
        return [ken, "context", "--format", "json", "--files", "10", "--ranker", "fused"]
    if mode.startswith("context-without-"):
        gone = mode[len("context-without-"):]
        keep = ",".join(s for s in CONTEXT_SIGNALS if s != gone)
        return [ken, "context", "--format", "json", "--files", "10", "--signals", keep]
    search = [ken, "search", "--json", "--limit", "10"]
    if mode == "lexical":
        return search + ["--lexical", "--files"]
    if mode == "semantic":
        return [ken, "search", "--json", "--semantic", "--limit", "60"]
    if mode == "bm25":
        return search + ["--lexical", "--files", "--plain-bm25"]
    if mode == "search-fused":
        # The fallback: reciprocal rank fusion of the lexical and semantic lists.
        return search + ["--ranker", "fused"]
    if mode.startswith("search-without-"):
        return search + ["--files", "--without", mode[len("search-without-"):]]
    # The default answer as a user gets it (files with their spans).
    return search


def ranked_files_untimed(ken, mode, query, cwd):
    r = run(mode_command(ken, mode) + ["--", query], cwd)
    key = "chunks" if mode == "semantic" else "files"
    if r.returncode not in (0, 1):
        print(f"  {mode} failed ({r.returncode}): {r.stderr.strip()[:200]}", file=sys.stderr)
        return []
    try:
        out = json.loads(r.stdout)
    except json.JSONDecodeError:
        return []
    # Semantic chunks name a file once per chunk: the files in the order of their best chunk.
    return list(dict.fromkeys(f["path"] for f in out.get(key, [])))[:10]


def ndcg(ranked, grades, k=10):
    dcg = sum((2 ** grades.get(p, 0) - 1) / math.log2(i + 2) for i, p in enumerate(ranked[:k]))
    ideal = sorted(grades.values(), reverse=True)[:k]
    idcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def metrics(ranked, q):
    grades = {r["path"]: r["grade"] for r in q["relevant"]}
    found = [p for p in ranked[:10] if p in grades]
    first = next((i for i, p in enumerate(ranked) if p in grades), None)
    tests = 0 if q.get("asks_for_tests") else sum(1 for p in ranked[:10] if TEST.search(p))
    return {
        "ndcg10": ndcg(ranked, grades),
        "recall10": len(set(found)) / len(grades),
        "mrr": 0.0 if first is None else 1.0 / (first + 1),
        "tests10": tests,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ken", required=True)
    ap.add_argument("--corpora", required=True)
    ap.add_argument("--set", default=os.path.join(os.path.dirname(__file__), "search_set"))
    ap.add_argument("--modes", default="search,lexical,context")
    ap.add_argument("--langs", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("--budgets", default="", help="ken context budgets to score the packed code at, e.g. 1000,2000,4000,8000")
    a = ap.parse_args()
    budgets = [int(b) for b in a.budgets.split(",") if b]
    packs = []
    ken = os.path.abspath(a.ken)
    modes = a.modes.split(",")
    queries = []
    for name in sorted(os.listdir(a.set)):
        if name.endswith(".jsonl") and (not a.langs or name[:-6] in a.langs.split(",")):
            with open(os.path.join(a.set, name)) as f:
                queries += [json.loads(l) for l in f if l.strip()]
    by_repo = defaultdict(list)
    for q in queries:
        by_repo[(q["repo"], q["commit"])].append(q)
    rows = []
    for (repo, commit), qs in sorted(by_repo.items()):
        dest = checkout(a.corpora, repo, commit)
        b = run([ken, "index", "build", dest, "-q"])
        if b.returncode != 0:
            print(f"{repo}: build failed: {b.stderr[-300:]}", file=sys.stderr)
            continue
        for q in qs:
            missing = [r["path"] for r in q["relevant"] if not os.path.exists(os.path.join(dest, r["path"]))]
            if missing:
                print(f"{q['id']}: relevant paths missing at {commit[:12]}: {missing}", file=sys.stderr)
            for mode in modes:
                ranked, ms = ranked_files(ken, mode, q["query"], dest)
                rows.append({"id": q["id"], "mode": mode, "language": q["language"], "ms": ms,
                             "category": q["category"], "ranked": ranked, **metrics(ranked, q)})
            chunks = search_chunks(ken, q["query"], dest) if budgets else []
            for budget in budgets:
                shown, tokens = packed(ken, q["query"], dest, budget)
                files, spans = pack_recall(shown, q)
                packs.append({"id": q["id"], "tool": "context", "budget": budget, "tokens": tokens, "files": files, "spans": spans})
                shown, tokens = read_within(chunks, dest, budget)
                files, spans = pack_recall(shown, q)
                packs.append({"id": q["id"], "tool": "search", "budget": budget, "tokens": tokens, "files": files, "spans": spans})
                shown, tokens = grep_and_read(q["query"], dest, budget)
                files, spans = pack_recall(shown, q)
                packs.append({"id": q["id"], "tool": "grep", "budget": budget, "tokens": tokens, "files": files, "spans": spans})
        print(f"{repo}: {len(qs)} queries", file=sys.stderr)
    report(rows, modes)
    if packs:
        print("\n| tool | budget (tokens) | code tokens (mean) | grade-2 files with code shown | grade-2 spans overlapped |")
        print("|---|---:|---:|---:|---:|")
        for tool in ("context", "search", "grep"):
            for b in budgets:
                sel = [p for p in packs if p["budget"] == b and p["tool"] == tool]
                spans = [p["spans"] for p in sel if p["spans"] is not None]
                print(f"| {tool} | {b} | {sum(p['tokens'] for p in sel) / len(sel):.0f} | {sum(p['files'] for p in sel) / len(sel):.3f} | "
                      f"{sum(spans) / len(spans) if spans else 0:.3f} |")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"rows": rows, "packs": packs}, f)


def report(rows, modes):
    def table(key):
        groups = sorted({r[key] for r in rows})
        print(f"\n| {key} | n | " + " | ".join(f"{m} NDCG@10 | {m} R@10 | {m} MRR" for m in modes) + " |")
        print("|---|---|" + "---|" * (3 * len(modes)))
        for g in groups + ["all"]:
            line = [g]
            n = None
            for m in modes:
                sel = [r for r in rows if r["mode"] == m and (g == "all" or r[key] == g)]
                n = len(sel)
                avg = lambda k: sum(r[k] for r in sel) / len(sel) if sel else 0.0
                line += [f"{avg('ndcg10'):.3f}", f"{avg('recall10'):.3f}", f"{avg('mrr'):.3f}"]
            print(f"| {line[0]} | {n} | " + " | ".join(line[1:]) + " |")
    table("language")
    table("category")
    for m in modes:
        sel = [r for r in rows if r["mode"] == m]
        if sel:
            print(f"\n{m}: test or example files per top 10 (queries not asking for them): "
                  f"{sum(r['tests10'] for r in sel) / len(sel):.2f}; whole-process latency p50 "
                  f"{statistics.median(r['ms'] for r in sel):.0f} ms, p90 "
                  f"{statistics.quantiles([r['ms'] for r in sel], n=10)[-1]:.0f} ms")


if __name__ == "__main__":
    main()
