#!/usr/bin/env bash
# The share of a full default build spent resolving the graph, per repository:
#
#   benches/resolution_share.sh KEN REPO_DIR...
#
# Each repository is indexed from scratch into a temporary index folder (never inside the
# repository), with every default part. Prints one TSV row per repository: files, total build
# seconds, graph seconds (resolution and its write), graph write seconds, and resolution's share of
# the build. Issue 31's bound: no repository above 20 %.
set -euo pipefail
KEN=${1:?usage: resolution_share.sh KEN REPO_DIR...}
shift
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
printf 'repo\tfiles\tlines\tbuild_s\tgraph_s\tgraph_write_s\tresolve_share\n'
for repo in "$@"; do
  idx="$TMP/idx"
  rm -rf "$idx"
  if ! "$KEN" index build --quiet --full --index-dir "$idx" "$repo" >/dev/null 2>"$TMP/err"; then
    printf '%s\tFAILED: %s\n' "$repo" "$(tail -1 "$TMP/err")"
    continue
  fi
  python3 - "$repo" "$idx" <<'PY'
import glob, json, os, sys
repo, idx = sys.argv[1], sys.argv[2]
manifests = sorted(glob.glob(os.path.join(idx, "**", "manifest.json"), recursive=True), key=os.path.getmtime)
m = json.load(open(manifests[-1]))
stats, graph = m["stats"], m["parts"].get("graph", {})
total = stats["total_ms"] / 1000
resolve = graph.get("total_ms", 0) / 1000
write = graph.get("write_ms", 0) / 1000
files = m.get("summary", {}).get("files", 0)
lines = m.get("summary", {}).get("lines", 0)
print(f"{os.path.basename(repo.rstrip(chr(47)))}\t{files}\t{lines}\t{total:.2f}\t{resolve:.2f}\t{write:.2f}\t{100*resolve/max(total,1e-9):.1f}%")
PY
done
