#!/usr/bin/env bash
# A first build killed part way and resumed, against one never stopped:
#
#   benches/resume_ratio.sh KEN TREE [FRACTION]     (FRACTION of the full build's time, default 0.7)
#
# On ${KEN_THREADS:-2} threads, each from no index: a full first build with checkpoints off (T0)
# and on (T), then a build killed (SIGKILL) at FRACTION x T, what the killed build left
# (files committed, files not read yet), and the build that resumes from it (R), with what it
# redid (checkpoints, the merge step of the lexical segments under a tight cap, or only the
# rest). Prints T/T0
# (the checkpoints' cost) and R/T (the target: at most 0.40 for a kill at 0.7).
set -euo pipefail
KEN=${1:?usage: resume_ratio.sh KEN TREE [FRACTION]}
TREE=${2:?usage: resume_ratio.sh KEN TREE [FRACTION]}
FRACTION=${3:-0.7}
export RAYON_NUM_THREADS=${KEN_THREADS:-2} KEN_THREADS=${KEN_THREADS:-2}
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc; }
rm -rf "$TREE/.kenning"
t0=$(secs "$KEN" -q index build "$TREE" --no-checkpoints)
rm -rf "$TREE/.kenning"
t=$(secs "$KEN" -q index build "$TREE")
rm -rf "$TREE/.kenning"
kill_at=$(echo "$t * $FRACTION" | bc)
"$KEN" -q index build "$TREE" >/dev/null 2>&1 &
pid=$!
sleep "$kill_at"
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
left=$("$KEN" index status "$TREE" --json 2>/dev/null | python3 -c 'import json,sys
try:
    v=json.load(sys.stdin); s=v["last_build"]
    print(v["summary"]["files"], s.get("pending",0), ",".join(s.get("deferred",[])) or "-")
except Exception: print("none")')
# The resumed build's log says what it had to redo: checkpoints, the merge step (a build under
# a tight cap), or neither (the whole tree's generation, which merges beside its other parts).
log=$(mktemp)
s=$(date +%s.%N)
KEN_LOG=info "$KEN" index build "$TREE" >/dev/null 2>"$log" || true
r=$(echo "$(date +%s.%N) - $s" | bc)
redo=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | { grep -o 'checkpoint [0-9]*/[0-9]*\|merging the lexical' || true; } | tr '\n' ',' | sed 's/,$//')
rm -f "$log"
printf 'tree %s\nfull build, no checkpoints (T0): %.1f s\nfull build, checkpoints (T): %.1f s  (T/T0 %.2f)\n' "$TREE" "$t0" "$t" "$(echo "$t / $t0" | bc -l)"
printf 'killed at %.1f s; left: files committed, files not read yet, parts deferred: %s\n' "$kill_at" "$left"
printf 'resumed build (R): %.1f s  (R/T %.2f); it redid: %s\n' "$r" "$(echo "$r / $t" | bc -l)" "${redo:-only the rest (graph, semantic, history)}"
