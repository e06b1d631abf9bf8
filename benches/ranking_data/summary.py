#!/usr/bin/env python3
"""Summarise a mining run: summary.py OUT > OUT/summary.md; also writes OUT/folds.tsv.

Folds for leave-repositories-out evaluation: fold = int(sha1(repo)[:8], 16) % 5, so a
repository's queries (all kinds, all snapshots) are always in one fold.
"""
import collections
import glob
import hashlib
import json
import os
import sys

out = sys.argv[1]
stats = [json.loads(l) for l in open(os.path.join(out, "stats.jsonl"))] if os.path.exists(os.path.join(out, "stats.jsonl")) else []
stats = list({s["repo"]: s for s in stats}.values())  # the last run of each repository
kinds = ("commit", "docstring", "symbol", "heading")
by_lang = collections.defaultdict(collections.Counter)
by_kind_poslang = collections.defaultdict(collections.Counter)
npos = collections.defaultdict(list)
defs_known = collections.Counter()
repos = set()
for f in sorted(glob.glob(os.path.join(out, "queries", "*.jsonl"))):
    for l in open(f):
        q = json.loads(l)
        repos.add(q["repo"])
        by_lang[q["language"]][q["kind"]] += 1
        npos[q["kind"]].append(len(q["positives"]))
        if q["kind"] == "commit" and any(p.get("defs") for p in q["positives"]):
            defs_known["commit"] += 1
with open(os.path.join(out, "folds.tsv"), "w") as f:
    for r in sorted(repos):
        f.write(f"{r}\t{int(hashlib.sha1(r.encode()).hexdigest()[:8], 16) % 5}\n")
tot = collections.Counter()
for c in by_lang.values():
    tot.update(c)
secs = sum(s["seconds"] for s in stats)
print(f"# Mining summary ({len(repos)} repositories, {len(by_lang)} languages)\n")
print("| language | repos | " + " | ".join(kinds) + " | total |")
print("|---|---|" + "---|" * (len(kinds) + 1))
rl = collections.Counter(s["language"] for s in stats)
for lang in sorted(by_lang):
    c = by_lang[lang]
    print(f"| {lang} | {rl[lang]} | " + " | ".join(str(c[k]) for k in kinds) + f" | {sum(c.values())} |")
print(f"| **all** | {len(stats)} | " + " | ".join(str(tot[k]) for k in kinds) + f" | {sum(tot.values())} |\n")
for k in kinds:
    if npos[k]:
        print(f"- {k}: mean positives per query {sum(npos[k]) / len(npos[k]):.2f}")
if tot["commit"]:
    print(f"- commit queries with at least one touched definition named: {defs_known['commit']} "
          f"({100 * defs_known['commit'] / tot['commit']:.0f}%)")
if stats:
    per = sorted(s["seconds"] for s in stats)
    snaps = sum(s["snapshots"] for s in stats)
    print(f"- mining time: {secs:.1f} s in all, median {per[len(per) // 2]:.2f} s, max {per[-1]:.2f} s "
          f"per repository (one core); {snaps} snapshots ({snaps / len(stats):.1f} per repository)")
    q = sum(tot.values())
    print(f"- queries per repository: {q / len(stats):.0f}; at that rate 200 repositories give "
          f"~{200 * q / len(stats):,.0f} queries in ~{200 * secs / len(stats) / 60:.1f} min of mining")
cs = os.path.join(out, "checkout_stats.jsonl")
if os.path.exists(cs):
    c = [json.loads(l) for l in open(cs)]
    t = sum(x["checkout_seconds"] for x in c)
    print(f"- snapshot checkouts: {t:.1f} s for {len(c)} repositories")
