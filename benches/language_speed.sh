#!/usr/bin/env bash
# Build speed per line, per language, against Python's, on real repositories:
#
#   benches/language_speed.sh KEN REPO_DIR...
#
# Each repository is indexed from scratch (`--full`, every default part) into a temporary
# folder RUNS times (default 3); the median build time is divided by the lines of code the
# build read (files read as text — docs, config — are left out of the lines, not of the time).
# A repository's language is the one with the most lines. "vs Python" is the time per line
# against the median of the Python repositories in the same run (pass at least one), for the
# whole build and for its parse phase (read, parse, extract, lexical documents: where a
# language's own cost lies; the rest is resolution, embedding and writing).
set -euo pipefail
KEN=${1:?usage: language_speed.sh KEN REPO_DIR...}
shift
RUNS=${RUNS:-3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for repo in "$@"; do
  for _ in $(seq "$RUNS"); do
    rm -rf "$TMP/idx"
    "$KEN" index build --quiet --full --index-dir "$TMP/idx" "$repo" >/dev/null 2>&1
    python3 - "$repo" "$TMP/idx" >>"$TMP/rows" <<'PY'
import glob, json, os, sys
repo, idx = sys.argv[1], sys.argv[2]
m = json.load(open(sorted(glob.glob(os.path.join(idx, "gen-*", "manifest.json")))[-1]))
text = {"markdown","restructuredtext","asciidoc","text","yaml","toml","json","ini","xml","sql",
        "protobuf","graphql","terraform","dockerfile","make","template"}
langs = {l: v["lines"] for l, v in m["summary"]["by_language"].items() if l not in text}
main = max(langs, key=langs.get)
print(json.dumps({"repo": os.path.basename(repo.rstrip("/")), "lang": main, "lines": sum(langs.values()),
                  "main_lines": langs[main], "ms": m["stats"]["total_ms"], "parse_ms": m["stats"]["parse_ms"]}))
PY
  done
done
python3 - "$TMP/rows" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r["repo"], []).append(r)
res = []
for repo, rs in by.items():
    ms = statistics.median(r["ms"] for r in rs)
    parse = statistics.median(r["parse_ms"] for r in rs)
    r = rs[0]
    res.append((repo, r["lang"], r["lines"], r["main_lines"], ms, ms / r["lines"] * 1000, parse, parse / r["lines"] * 1000))
py = [x[5] for x in res if x[1] == "python"]
base = statistics.median(py) if py else float("nan")
pyp = [x[7] for x in res if x[1] == "python"]
pbase = statistics.median(pyp) if pyp else float("nan")
print("| repository | main language | code lines (main) | build (median) | ms per 1k lines | vs Python | parse phase | ms per 1k lines | vs Python |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for repo, lang, lines, main, ms, per, parse, pper in res:
    print(f"| {repo} | {lang} | {lines:,} ({main:,}) | {ms/1000:.2f} s | {per:.1f} | {per/base:.2f}x | {parse/1000:.2f} s | {pper:.1f} | {pper/pbase:.2f}x |")
PY
