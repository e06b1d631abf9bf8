#!/usr/bin/env bash
# Mine weak-supervision ranking queries from the repositories in benches/ranking_data/repos.csv.
#
#   benches/ranking_data/run.sh                 # every repository whose mirror is present
#   SHARD=0/4 benches/ranking_data/run.sh       # a quarter of them (by line number), for a step budget
#   ONLY=owner/name,owner/name benches/ranking_data/run.sh
#
# Environment:
#   MIRRORS   folder of bare mirrors, <owner>+<name>/repo (default /work/.mirror, the layout the
#             `fetch` tool writes). A missing mirror is skipped and listed in $OUT/missing.txt,
#             unless CLONE=1, which runs `git clone --mirror https://github.com/<owner>/<name>`.
#   OUT       where everything is written (default /work/data/ranking; never inside this repo):
#             queries/<owner>+<name>.jsonl, snapshots/<owner>+<name>.jsonl, stats.jsonl (one line
#             per repository with counts and seconds), licences.tsv, folds.tsv, summary.md
#   CHECKOUT  none (default) | static | all: materialise snapshots as shared clones whose history
#             ends at the snapshot (later refs deleted), under $OUT/checkouts/<owner>+<name>@<sha12>,
#             for the indexing / feature step. `static` = the one snapshot the docstring, symbol
#             and heading queries use; `all` = every commit batch's snapshot too.
#   MINE_ARGS extra arguments for mine.py (caps: --max-commit 150 --max-docstring 100 ...).
# A repository whose licence file is not detected as one of ACCEPT is skipped (licences.tsv says why).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
MIRRORS=${MIRRORS:-/work/.mirror}
OUT=${OUT:-/work/data/ranking}
CHECKOUT=${CHECKOUT:-none}
SHARD=${SHARD:-0/1}
ACCEPT='MIT|Apache-2.0|BSD-2-Clause|BSD-3-Clause|ISC|MPL-2.0|Zlib'
case "$OUT" in "$(cd "$HERE/../.." && pwd)"*) echo "OUT must be outside the repository" >&2; exit 2;; esac
mkdir -p "$OUT/queries" "$OUT/snapshots" "$OUT/checkouts"
: > "$OUT/missing.txt.part"
shard_i=${SHARD%/*} shard_n=${SHARD#*/}

checkout() { # gitdir name sha
  local dst="$OUT/checkouts/$2@${3:0:12}"
  [ -d "$dst/.git" ] && return 0
  git clone -q --shared --no-checkout "$1" "$dst"
  git -C "$dst" checkout -q --detach "$3"
  git -C "$dst" for-each-ref --format='%(refname)' | while read -r ref; do git -C "$dst" update-ref -d "$ref"; done
  git -C "$dst" checkout -q -B snapshot "$3"
  git -C "$dst" reflog expire --expire=now --all
}

n=0
tail -n +2 "$HERE/repos.csv" | while IFS=, read -r repo lang _rest; do
  n=$((n + 1))
  [ $(( (n - 1) % shard_n )) -eq "$shard_i" ] || continue
  if [ -n "${ONLY:-}" ] && ! [[ ",$ONLY," == *",$repo,"* ]]; then continue; fi
  name=${repo/\//+}
  gd="$MIRRORS/$name/repo"
  [ -d "$gd/.git" ] && gd="$gd/.git"
  if [ ! -d "$gd" ]; then
    if [ "${CLONE:-0}" = 1 ]; then
      mkdir -p "$MIRRORS/$name" && git clone -q --mirror "https://github.com/$repo" "$gd" || { echo "$repo" >> "$OUT/missing.txt.part"; continue; }
    else
      echo "$repo" >> "$OUT/missing.txt.part"; continue
    fi
  fi
  lic=$(python3 "$HERE/mine.py" --licence "$gd")
  ok=0
  for t in ${lic// OR / }; do [[ "$t" =~ ^($ACCEPT)$ ]] && ok=1; done
  [[ "$lic" =~ GPL|BUSL ]] && ok=0
  if [ $ok = 0 ]; then
    printf '%s\t%s\tskipped\n' "$repo" "$lic" >> "$OUT/licences.tsv"; continue
  fi
  printf '%s\t%s\tmined\n' "$repo" "$lic" >> "$OUT/licences.tsv"
  # shellcheck disable=SC2086
  python3 "$HERE/mine.py" --mirror "$gd" --repo "$repo" --lang "$lang" \
    --out "$OUT/queries/$name.jsonl" --snapshots-out "$OUT/snapshots/$name.jsonl" ${MINE_ARGS:-} \
    >> "$OUT/stats.jsonl"
  if [ "$CHECKOUT" != none ]; then
    t0=$(date +%s.%N)
    python3 -c 'import json,sys
for l in open(sys.argv[1]):
    s=json.loads(l)
    if sys.argv[2]=="all" or s.get("static"): print(s["snapshot"])' "$OUT/snapshots/$name.jsonl" "$CHECKOUT" |
      while read -r sha; do checkout "$gd" "$name" "$sha"; done
    printf '{"repo": "%s", "checkout_seconds": %.2f}\n' "$repo" "$(echo "$(date +%s.%N) - $t0" | bc)" >> "$OUT/checkout_stats.jsonl"
  fi
done
sort -u "$OUT/missing.txt.part" > "$OUT/missing.txt"; rm -f "$OUT/missing.txt.part"
python3 "$HERE/summary.py" "$OUT" > "$OUT/summary.md"
cat "$OUT/summary.md"
