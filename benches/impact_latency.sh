#!/bin/sh
# `ken impact` latency on a repository's recent history: the source part of each of the last N
# non-merge commits that change code is given to `ken impact --patch` against the index of
# the current checkout; prints each time and the p50/p90 (milliseconds).
#   benches/impact_latency.sh KEN REPO [N]
set -eu
KEN=$1; REPO=$2; N=${3:-40}
cd "$REPO"
[ -d .kenning ] || "$KEN" -q index build .
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
git log --no-merges --format=%H -n $((N * 3)) | while read -r c; do
  git diff "$c^" "$c" -- '*.go' '*.py' '*.rs' '*.js' '*.ts' '*.java' ':!*_test.go' ':!*test*' > "$tmp/p.diff" 2>/dev/null || continue
  [ -s "$tmp/p.diff" ] || continue
  s=$(date +%s%N)
  "$KEN" -q impact --patch "$tmp/p.diff" --json > /dev/null 2>&1 || true
  e=$(date +%s%N)
  echo $(( (e - s) / 1000000 ))
done | head -n "$N" > "$tmp/times"
sort -n "$tmp/times" | awk '{a[NR]=$1} END {printf "commits %d  p50 %d ms  p90 %d ms  max %d ms\n", NR, a[int((NR+1)/2)], a[int(NR*0.9+0.5)], a[NR]}'
