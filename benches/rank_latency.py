#!/usr/bin/env python3
"""Whole-process latency of `ken search` and `ken context` on one repository, two builds side
by side (interleaved query by query, so both see the same machine):

    benches/rank_latency.py --repo CHECKOUT --queries benches/search_set/cpp.jsonl \
        --ken A=target/release/ken --ken B=/path/to/other/ken [--rounds 3]

The repository must already be indexed (`ken index build`). Queries are the lines of the set
whose `repo` the checkout's folder name ends with (`owner+name`), or every line with
`--all-queries`. Reports p50 and p90 in milliseconds per build and command, and the ratio of
each build's p50 to the first's.
"""
import argparse
import json
import os
import statistics
import subprocess
import time

COMMANDS = {
    "search": lambda ken, q: [ken, "search", "--json", "--limit", "10", "--", q],
    "search-fused": lambda ken, q: [ken, "search", "--json", "--limit", "10", "--ranker", "fused", "--", q],
    "context": lambda ken, q: [ken, "context", "--format", "json", "--files", "10", "--", q],
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--ken", action="append", required=True, help="NAME=PATH")
    ap.add_argument("--commands", default="search,context")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--all-queries", action="store_true")
    a = ap.parse_args()
    kens = [k.split("=", 1) for k in a.ken]
    name = os.path.basename(os.path.abspath(a.repo))
    qs = [json.loads(l) for l in open(a.queries) if l.strip()]
    if not a.all_queries:
        qs = [q for q in qs if q["repo"].replace("/", "+") == name]
    times = {}
    for _ in range(a.rounds):
        for q in qs:
            for cmd in a.commands.split(","):
                for kname, ken in kens:
                    argv = COMMANDS[cmd](ken, q["query"])
                    t0 = time.perf_counter()
                    subprocess.run(argv, cwd=a.repo, capture_output=True)
                    times.setdefault((kname, cmd), []).append((time.perf_counter() - t0) * 1000)
    print(f"{name}: {len(qs)} queries x {a.rounds} rounds")
    print("| build | command | p50 ms | p90 ms | p50 / first build's |")
    print("|---|---|---:|---:|---:|")
    for cmd in a.commands.split(","):
        base = statistics.median(times[(kens[0][0], cmd)])
        for kname, _ in kens:
            t = times[(kname, cmd)]
            p50 = statistics.median(t)
            p90 = statistics.quantiles(t, n=10)[-1]
            print(f"| {kname} | {cmd} | {p50:.1f} | {p90:.1f} | {p50 / base:.2f} |")


if __name__ == "__main__":
    main()
