#!/usr/bin/env python3
"""`ken impact` replayed on real history: does it predict the tests a commit changed?

    benches/impact_replay.py --mirrors DIR [--repo owner+name ...] [--commits 20]

For each repository (a bare clone with full history, <DIR>/<owner>+<name>/repo), the most
recent non-merge commits that change both source files and test files are replayed: the
parent commit is extracted into a work folder (the index there is built incrementally from
one commit to the next, without the semantic part), the source-only part of the commit's
diff is given to `ken impact --patch -`, and the test files the commit changed are looked
for among the predicted tests (in ken's order, one entry per file). Reported per language:
recall of the changed test files in the first 5 and 10 predicted test files, precision of
those 10, how many commits had any prediction, and the time of `ken impact` per commit.
Test files the commit added are counted too (only naming can find them), and separately
the recall over test files that existed at the parent. Also the rank, in ken's list, of the
first test file holding a test that calls or uses the changed code itself (an affected test
definition reached in one step): the test most likely to break.

Each parent is checked out in a clone whose HEAD is the parent (its history ends there).
With `--git` the index has its history part and `ken impact` can use past co-changes;
without it the index is built with `--no-history`, as on a plain tree.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

SOURCE_EXT = (".py", ".rs", ".ts", ".tsx", ".js", ".go", ".java")
TEST_FILE = re.compile(r"(^|/)(test_[^/]*|conftest\.py|[^/]*_tests?\.(py|go|rs)|[^/]*\.(test|spec)\.(ts|tsx|js))$")
TEST_DIR = re.compile(r"(^|/)(tests?|testing|__tests__|spec)/")


def is_test(path):
    return bool(TEST_FILE.search(path) or TEST_DIR.search(path))


HELPERS = ("util.rs", "utils.rs", "common.rs", "macros.rs", "mod.rs")


def runnable(path):
    """A file a test runner runs (roughly the test suites of ken's `PathKind`): not helpers, fixtures, data."""
    f = path.rsplit("/", 1)[-1]
    rust_suite = f.endswith(".rs") and "tests" in path.split("/")[:-1] and f not in HELPERS
    return (f.startswith("test_") and f.endswith(".py")) or f.endswith(("_test.py", "_test.go", "Test.java", "Tests.java")) \
        or ".test." in f or ".spec." in f or "__tests__/" in path or rust_suite


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True, check=True).stdout


def commits(gitdir, want):
    out = git(gitdir, "log", "--no-merges", "--format=%H %P", "-n", "3000").decode().splitlines()
    picked = []
    for line in out:
        parts = line.split()
        if len(parts) != 2:
            continue
        c, parent = parts
        names = git(gitdir, "diff-tree", "--no-commit-id", "-r", "--name-status", parent, c).decode().splitlines()
        src, tests, tests_existing = [], [], []
        for n in names:
            status, *paths = n.split("\t")
            path = paths[-1]
            if not path.endswith(SOURCE_EXT):
                continue
            if is_test(path):
                tests.append(path)
                if status[0] != "A":
                    tests_existing.append(path)
            elif status[0] != "A":
                src.append(path)
        if src and tests and len(src) <= 20:
            picked.append((c, parent, src, tests, tests_existing))
        if len(picked) >= want:
            break
    return picked


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirrors", required=True)
    ap.add_argument("--repo", action="append")
    ap.add_argument("--commits", type=int, default=20)
    ap.add_argument("--ken", required=True)
    ap.add_argument("--work", default="/tmp/ken-impact-replay")
    ap.add_argument("--out", default="/tmp/ken-impact-replay.jsonl")
    ap.add_argument("--score-only", action="store_true", help="re-score the rows in --out")
    ap.add_argument("--git", action="store_true", help="check out each parent with its history")
    a = ap.parse_args()
    repos = a.repo or ["psf+requests", "pallets+flask", "pylint-dev+pylint", "BurntSushi+ripgrep", "sharkdp+fd", "sharkdp+bat"]
    rows = []
    if a.score_only:
        rows = [json.loads(l) for l in open(a.out)]
        repos = []
    with open(a.out, "a" if a.score_only else "w") as log:
        for repo in repos:
            gitdir = os.path.join(a.mirrors, repo, "repo")
            if not os.path.isdir(gitdir):
                print(f"skip {repo}: no mirror at {gitdir}", file=sys.stderr)
                continue
            ws = os.path.join(a.work, repo + "-git")
            if not os.path.isdir(ws):
                subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", gitdir, ws], check=True)
            os.makedirs(ws, exist_ok=True)
            picked = commits(gitdir, a.commits)
            for c, parent, src, tests, tests_existing in reversed(picked):
                # Snapshots may lack big blobs (data files): checkout reports them and goes on.
                subprocess.run(["git", "-C", ws, "checkout", "-q", "--detach", "-f", parent], capture_output=True)
                subprocess.run(["git", "-C", ws, "clean", "-qfdx", "-e", ".kenning"], check=True)
                build = [a.ken, "-q", "index", "build", ws, "--no-semantic"] + ([] if a.git else ["--no-history"])
                b = subprocess.run(build, capture_output=True)
                if b.returncode != 0:
                    print(f"{repo} {c[:8]}: build failed: {b.stderr.decode()[-300:]}", file=sys.stderr)
                    continue
                patch = git(gitdir, "diff", "--no-color", "-M", parent, c, "--", *src)
                s = time.time()
                r = subprocess.run([a.ken, "impact", "--repo", ws, "--patch", "-", "--json", "-q"], input=patch, capture_output=True)
                elapsed = time.time() - s
                try:
                    v = json.loads(r.stdout)["impact"]
                except (json.JSONDecodeError, KeyError):
                    print(f"{repo} {c[:8]}: impact failed: {r.stderr.decode()[-300:]}", file=sys.stderr)
                    continue
                predicted = []
                for t in v["tests"]:
                    if t["path"] not in predicted:
                        predicted.append(t["path"])
                lang = "python" if src[0].endswith(".py") else "rust" if src[0].endswith(".rs") else "other"
                # Tests that call (or use) the changed code themselves: the ones most likely to break.
                direct = sorted({x["path"] for x in v["affected"] if x.get("is_test") and x.get("direct")})
                first_direct = next((i + 1 for i, p in enumerate(predicted) if p in direct), None)
                row = {"repo": repo, "commit": c, "language": lang, "gold": tests, "gold_existing": tests_existing,
                       "predicted": predicted[:20], "changed": len(v["changed"]), "seconds": elapsed,
                       "direct_tests": direct, "first_direct": first_direct}
                rows.append(row)
                log.write(json.dumps(row) + "\n")
                log.flush()
    def recall(r, k, key="gold"):
        g = r[key]
        return None if not g else sum(1 for t in g if t in r["predicted"][:k]) / len(g)
    for r in rows:
        r["gold_runnable"] = [t for t in r["gold"] if runnable(t)]
    for repo in sorted({r["repo"] for r in rows}):
        rs = [r for r in rows if r["repo"] == repo]
        r10 = [recall(r, 10) for r in rs]
        print(f"{repo}: {len(rs)} commits, changed-test recall@10 {100 * sum(r10) / len(r10):.1f}")
    print("| language | commits | recall@5 | recall@10 | precision@10 | recall@10 (tests existing at parent) | recall@10 (runnable test files only) | commits with a prediction | first directly calling test: commits with one, rank 1, top 3, median rank | ken impact p50 / max |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for lang in sorted({r["language"] for r in rows}) + ["all"]:
        rs = [r for r in rows if lang == "all" or r["language"] == lang]
        if not rs:
            continue
        mean = lambda xs: 100 * sum(xs) / len(xs) if xs else float("nan")
        r5 = mean([recall(r, 5) for r in rs])
        r10 = mean([recall(r, 10) for r in rs])
        p10 = mean([sum(1 for t in r["predicted"][:10] if t in r["gold"]) / len(r["predicted"][:10]) for r in rs if r["predicted"]])
        ex = [recall(r, 10, "gold_existing") for r in rs]
        r10e = mean([x for x in ex if x is not None])
        rn = [recall(r, 10, "gold_runnable") for r in rs]
        r10r = mean([x for x in rn if x is not None])
        any_pred = sum(1 for r in rs if r["predicted"])
        secs = sorted(r["seconds"] for r in rs)
        # Rows from before the field existed have no direct tests recorded.
        ranks = sorted(r["first_direct"] for r in rs if r.get("first_direct"))
        direct = "-" if not ranks else (
            f"{len(ranks)}, {mean([x == 1 for x in ranks]):.0f} %, {mean([x <= 3 for x in ranks]):.0f} %, {ranks[len(ranks) // 2]}")
        print(f"| {lang} | {len(rs)} | {r5:.1f} | {r10:.1f} | {p10:.1f} | {r10e:.1f} | {r10r:.1f} | {any_pred} | {direct} | {secs[len(secs)//2]*1000:.0f} ms / {secs[-1]*1000:.0f} ms |")


if __name__ == "__main__":
    main()
