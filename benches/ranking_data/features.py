#!/usr/bin/env python3
"""Feature rows for the learned ranker: every mined query run through `ken rank-features` over
an index of the snapshot it was mined at.

    benches/ranking_data/features.py --data /work/data/ranking --ken target/release/ken \
        [--jobs 2] [--per-kind 40] [--snapshots 1] [--only owner/name,...]

Per repository (a worker each, `--jobs` at once), in a scratch copy of its static checkout
(`$DATA/checkouts/<owner>+<name>@<sha12>`, made by `run.sh` with CHECKOUT=static):
1. the static snapshot is indexed (`ken index build`: lexical, graph, vectors, history cut at
   the snapshot, as a user's clone then was) and its symbol, heading and commit queries run;
2. the docstring queries' comments are blanked in the files (lines kept, so spans stay put),
   the index is updated, and those queries run: the answer cannot be read off its comment;
3. the `--snapshots` commit batches with the most queries are checked out in turn (history
   ending at the snapshot, before every commit of the batch), indexed, and their queries run.
At most `--per-kind` queries of each kind per repository (a fixed sample: the first, in the
miner's shuffled order). Writes `$DATA/features/<owner>+<name>.jsonl`: one line per query with
its mined kind, the query's kind as ken parsed it, the positive paths, and the fused ranking's
head with each candidate's feature vector; and `$DATA/features/stats.jsonl` (seconds per step).
With `--plain-pass`, only every third static query is run, without the history signals (as
on a plain tree, which has no history part), into `<owner>+<name>.plain.jsonl`.
Repositories of the search set (benches/search_set) and of the dev set are refused.
"""
import argparse
import glob
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DEV_SET = {"pydata/xarray", "pylint-dev/pylint", "BurntSushi/ripgrep", "sharkdp/fd", "psf/requests",
           "sharkdp/bat", "mwaskom/seaborn", "tokio-rs/bytes", "pallets/flask", "rayon-rs/rayon",
           "serde-rs/serde"}


def held_out():
    out = set(DEV_SET)
    for f in glob.glob(os.path.join(ROOT, "benches", "search_set", "repos_*.txt")):
        out |= {l.split()[0] for l in open(f) if l.strip()}
    return {r.lower() for r in out}


def sh(*args, cwd=None):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, errors="replace")


def run_queries(ken, wdir, queries, tmp, plain=False):
    if not queries:
        return []
    qf = os.path.join(tmp, "queries.jsonl")
    with open(qf, "w") as f:
        for q in queries:
            f.write(json.dumps({"id": q["id"], "query": q["query"]}) + "\n")
    r = sh(ken, "rank-features", "--queries", qf, "--repo", wdir, *(["--without-history"] if plain else []))
    if r.returncode != 0:
        print(f"{wdir}: rank-features failed: {r.stderr[-300:]}", file=sys.stderr)
        return []
    by_id = {q["id"]: q for q in queries}
    rows = []
    for line in r.stdout.splitlines():
        v = json.loads(line)
        q = by_id.get(v["id"])
        if q is None or "files" not in v:
            continue
        rows.append({"id": q["id"] + ("#plain" if plain else ""), "repo": q["repo"], "language": q["language"], "kind": q["kind"],
                     "query_kind": v.get("kind"), "positives": [p["path"] for p in q["positives"]],
                     "ms": v.get("ms"), "files": v["files"]})
    return rows


def build(ken, wdir):
    r = sh(ken, "-q", "index", "build", wdir)
    if r.returncode != 0:
        raise RuntimeError(f"build failed in {wdir}: {r.stderr[-300:]}")


def blank(wdir, spans):
    """Blank each span's lines in place (the line count kept)."""
    by_path = {}
    for s in spans:
        by_path.setdefault(s["path"], []).append(s)
    for path, ss in by_path.items():
        full = os.path.join(wdir, path)
        try:
            lines = open(full, encoding="utf-8", errors="surrogateescape").read().split("\n")
        except OSError:
            continue
        for s in ss:
            for i in range(s["start_line"] - 1, min(s["end_line"], len(lines))):
                lines[i] = ""
        with open(full, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write("\n".join(lines))


def other_snapshots(a, wdir, tmp, queries, static, static_q, rows, t):
    """The docstring queries over their blanked comments, then the commit batches at their own
    snapshots (a build failure raises RuntimeError)."""
    ken = a.ken
    cap = lambda qs: qs[: a.per_kind]
    # Docstrings: their comments blanked, the index updated.
    doc = [q for q in static_q["docstring"] if q.get("remove")]
    if doc:
        blank(wdir, [q["remove"] for q in doc])
        t1 = time.time()
        build(ken, wdir)
        rows += run_queries(ken, wdir, doc, tmp)
        t["docstring"] = time.time() - t1
        sh("git", "-C", wdir, "checkout", "-q", "--", ".")
    # Commit batches at their own snapshots, most queries first.
    counts = {}
    for q in queries:
        if q["kind"] == "commit" and q["snapshot"] != static:
            counts[q["snapshot"]] = counts.get(q["snapshot"], 0) + 1
    for snap, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: a.snapshots]:
        r = sh("git", "-C", wdir, "checkout", "-q", "-f", "--detach", snap)
        if r.returncode != 0:
            continue
        sh("git", "-C", wdir, "clean", "-qfdx", "-e", ".kenning")
        t1 = time.time()
        build(ken, wdir)
        rows += run_queries(ken, wdir, cap([q for q in queries if q["snapshot"] == snap and q["kind"] == "commit"]), tmp)
        t["snapshots"] = t.get("snapshots", 0) + time.time() - t1


def one_repo(args):
    name, a = args
    data, ken = a.data, a.ken
    out_path = os.path.join(data, "features", name + (".plain.jsonl" if a.plain_pass else ".jsonl"))
    if os.path.exists(out_path) and not a.force:
        return name, "kept", {}
    queries = [json.loads(l) for l in open(os.path.join(data, "queries", name + ".jsonl"))]
    snaps = [json.loads(l) for l in open(os.path.join(data, "snapshots", name + ".jsonl"))]
    static = next((s["snapshot"] for s in snaps if s.get("static")), None)
    if static is None:
        return name, "no static snapshot", {}
    src = os.path.join(data, "checkouts", f"{name}@{static[:12]}")
    if not os.path.isdir(src):
        return name, "no checkout", {}
    wdir = os.path.join(a.work, name)
    tmp = os.path.join(a.work, name + ".tmp")
    shutil.rmtree(wdir, ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    t = {}
    t0 = time.time()
    shutil.copytree(src, wdir, symlinks=True)
    shutil.rmtree(os.path.join(wdir, ".kenning"), ignore_errors=True)
    rows = []
    try:
        cap = lambda qs: qs[: a.per_kind]
        static_q = {k: cap([q for q in queries if q["kind"] == k and q["snapshot"] == static])
                    for k in ("symbol", "heading", "commit", "docstring")}
        t1 = time.time()
        build(ken, wdir)
        t["build"] = time.time() - t1
        t1 = time.time()
        static_all = static_q["symbol"] + static_q["heading"] + static_q["commit"]
        if a.plain_pass:
            # As on a plain tree (no history part): every third static query, and nothing else.
            rows += run_queries(ken, wdir, static_all[::3], tmp, plain=True)
            t["plain"] = time.time() - t1
        else:
            rows += run_queries(ken, wdir, static_all, tmp)
            t["queries"] = time.time() - t1
            other_snapshots(a, wdir, tmp, queries, static, static_q, rows, t)
    except RuntimeError as e:
        return name, str(e), t
    finally:
        shutil.rmtree(wdir, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    with open(out_path + ".part", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    os.replace(out_path + ".part", out_path)
    t["total"] = time.time() - t0
    return name, f"{len(rows)} rows", t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/work/data/ranking")
    ap.add_argument("--ken", required=True)
    ap.add_argument("--work", default="/tmp/ken-features")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--per-kind", type=int, default=40)
    ap.add_argument("--snapshots", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--plain-pass", action="store_true",
                    help="only every third static query, ranked without the history part (a plain tree), "
                         "to <name>.plain.jsonl")
    a = ap.parse_args()
    a.ken = os.path.abspath(a.ken)
    os.makedirs(os.path.join(a.data, "features"), exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    banned = held_out()
    names = []
    for path in sorted(glob.glob(os.path.join(a.data, "queries", "*.jsonl"))):
        name = os.path.basename(path)[:-6]
        repo = name.replace("+", "/", 1)
        if repo.lower() in banned:
            print(f"{repo}: held out (search set or dev set), skipped", file=sys.stderr)
            continue
        if a.only and repo not in a.only.split(","):
            continue
        names.append(name)
    t0 = time.time()
    with multiprocessing.Pool(a.jobs) as pool, open(os.path.join(a.data, "features", "stats.jsonl"), "a") as st:
        for i, (name, what, t) in enumerate(pool.imap_unordered(one_repo, [(n, a) for n in names])):
            print(f"[{i + 1}/{len(names)} {time.time() - t0:.0f}s] {name}: {what}", file=sys.stderr)
            st.write(json.dumps({"repo": name, "result": what, "seconds": t}) + "\n")
            st.flush()


if __name__ == "__main__":
    main()
