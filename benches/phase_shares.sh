#!/usr/bin/env bash
# Where a full build's time goes, phase by phase, against the bare parse:
#
#   benches/phase_shares.sh KEN PARSE_FLOOR REPO_DIR...
#
# KEN is a release `ken`, PARSE_FLOOR a release `examples/parse_floor` (walk + read + parse,
# nothing else). Each repository is indexed from scratch (`--full`, every default part) into a
# temporary folder RUNS times (default 3) on ${KEN_THREADS:-2} threads, the parse floor run as
# many times between them; per repository the median of each phase (walk, parse — which
# includes extraction and the lexical documents —, assemble, lexical commit, graph, vectors,
# history), its share of the build, and the build and each phase against the median floor.
set -euo pipefail
KEN=${1:?usage: phase_shares.sh KEN PARSE_FLOOR REPO_DIR...}
FLOOR=${2:?usage: phase_shares.sh KEN PARSE_FLOOR REPO_DIR...}
shift 2
RUNS=${RUNS:-3}
THREADS=${KEN_THREADS:-2}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for repo in "$@"; do
  : >"$TMP/runs"
  for _ in $(seq "$RUNS"); do
    rm -rf "$TMP/idx"
    "$KEN" index build --quiet --full --threads "$THREADS" --index-dir "$TMP/idx" "$repo" >/dev/null 2>&1
    python3 -c 'import glob,json,sys; m=json.load(open(sorted(glob.glob(sys.argv[1]+"/gen-*/manifest.json"))[-1])); s=m["stats"]; d=dict(s.get("phases_ms",{})); d["walk"]=s["walk_ms"]; d["parse"]=s["parse_ms"]; d["total"]=s["total_ms"]; d["lines"]=m["summary"]["lines"]; print(json.dumps(d))' "$TMP/idx" >>"$TMP/runs"
    start=$(date +%s%N)
    "$FLOOR" "$repo" "$THREADS" >/dev/null 2>&1
    echo "{\"floor\": $(( ($(date +%s%N) - start) / 1000000 ))}" >>"$TMP/runs"
  done
  python3 - "$repo" "$TMP/runs" <<'PY'
import json, statistics, sys
repo, path = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(path)]
floor = statistics.median(r["floor"] for r in rows if "floor" in r)
builds = [r for r in rows if "total" in r]
med = lambda k: statistics.median(r.get(k, 0) for r in builds)
total = med("total")
print(f"## {repo}: {int(med('lines')):,} lines; build {total/1000:.2f} s, bare parse {floor/1000:.2f} s: build {total/floor:.2f}x the parse")
print("| phase | median | share of build | vs bare parse |")
print("|---|---:|---:|---:|")
for k in ["walk", "parse", "assemble", "lexical", "graph", "vectors", "history"]:
    v = med(k)
    print(f"| {k} | {v/1000:.2f} s | {100*v/total:.1f}% | {v/floor:.2f}x |")
PY
done
