#!/usr/bin/env bash
# Fleet throughput and scatter-gather latency, inside a loopback-only network namespace.
#   benches/fleet_throughput.sh CRATES_DIR [N]
# CRATES_DIR holds source trees no one here wrote (e.g. `cargo vendor` output); the first N
# (default 200) become git repositories. For 1 and then 2 workers (each run on a fresh NATS
# and a fresh file:// remote): enqueue all N, time until the queue is empty and every pointer
# is set. Then two shard groups serve the repositories and 200 `ken fleet search` queries
# give p50/p99 of the scatter-gather (wall time of the fleet answer, `ms`). With PIN_CORES=1
# each worker runs on a core of its own (taskset) with one build thread, so that 2 workers
# against 1 shows how the fleet scales when workers do not share cores.
# Needs: a release `ken` (KEN, default target/release/ken), nats-server (KEN_NATS_SERVER).
set -euo pipefail
if [[ -z "${KEN_FLEET_NETNS:-}" ]]; then
  exec unshare --user --map-root-user --net env KEN_FLEET_NETNS=1 "$0" "$@"
fi
PATH="$PATH:/usr/sbin:/sbin" ip link set lo up
SRC="$(cd "$1" && pwd)"; N="${2:-200}"
KEN="${KEN:-$(cd "$(dirname "$0")/.." && pwd)/target/release/ken}"
NATS_BIN="${KEN_NATS_SERVER:-nats-server}"
WORK="$(mktemp -d)"; trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
export KEN_NATS=nats://127.0.0.1:4222
mkdir -p "$WORK/repos"
i=0
for d in "$SRC"/*/; do
  [[ $i -ge $N ]] && break
  name="$(basename "$d")"; r="$WORK/repos/$name"
  cp -r "$d" "$r"; rm -f "$r/.cargo-checksum.json"
  git -C "$r" init -q -b main && git -C "$r" add -A && git -C "$r" -c user.name=b -c user.email=b@b commit -qm v >/dev/null
  i=$((i+1))
done
lines=$(find "$WORK/repos" -name '*.rs' -print0 | xargs -0 cat | wc -l)
echo "repositories: $i ($lines lines of Rust)"
run() { # WORKERS
  local w=$1 d="$WORK/run$1"
  mkdir -p "$d"
  "$NATS_BIN" -a 127.0.0.1 -p 4222 -js -sd "$d/js" > "$d/nats.log" 2>&1 & local np=$!
  for _ in $(seq 100); do (echo > /dev/tcp/127.0.0.1/4222) 2>/dev/null && break; sleep 0.1; done
  for r in "$WORK"/repos/*; do "$KEN" fleet enqueue "$r" --name "bench/$(basename "$r")" --json > /dev/null; done
  local t0; t0=$(date +%s.%N)
  for k in $(seq "$w"); do
    if [[ -n "${PIN_CORES:-}" ]]; then # each worker on a core of its own, one build thread
      RAYON_NUM_THREADS=1 taskset -c $((k - 1)) "$KEN" worker --remote "file://$d/remote" --workdir "$d/w$k" --id "w$k" --exit-when-idle 2 > "$d/w$k.log" 2>&1 &
    else
      "$KEN" worker --remote "file://$d/remote" --workdir "$d/w$k" --id "w$k" --exit-when-idle 2 > "$d/w$k.log" 2>&1 &
    fi
  done
  wait $(jobs -p | grep -v "^$np$") 2>/dev/null || true
  local t1; t1=$(date +%s.%N)
  local done_; done_=$(cat "$d"/w*.log | grep -c " done " || true)
  local secs; secs=$(echo "$t1 - $t0 - 2" | bc)
  echo "workers=$w items_done=$done_ seconds=$secs items_per_s=$(echo "scale=2; $done_ / $secs" | bc)"
  if [[ $w -eq 2 ]]; then
    local ts; ts=$(date +%s.%N)
    "$KEN" serve --fleet --group g0 --groups g0,g1 --remote "file://$d/remote" --cache "$d/c0" > "$d/s0.log" 2>&1 & local s0=$!
    "$KEN" serve --fleet --group g1 --groups g0,g1 --remote "file://$d/remote" --cache "$d/c1" > "$d/s1.log" 2>&1 & local s1=$!
    for _ in $(seq 600); do grep -q "serving shard" "$d/s0.log" && grep -q "serving shard" "$d/s1.log" && break; sleep 0.2; done
    echo "shard servers loaded their snapshots in $(echo "$(date +%s.%N) - $ts" | bc) s; cache on disk: $(du -sh "$d/c0" | cut -f1) + $(du -sh "$d/c1" | cut -f1)"
    : > "$d/ms"
    for q in $(seq 200); do
      terms=(parse error buffer iterator serialize format thread config string token)
      "$KEN" fleet search "${terms[$((q % 10))]} value" --groups g0,g1 --json --mode lexical |
        python3 -c 'import json,sys; a=json.load(sys.stdin); print(a["ms"], a["repos_answered"], a["partial"])' >> "$d/ms"
    done
    python3 - "$d/ms" <<'PY'
import sys
rows=[l.split() for l in open(sys.argv[1])]
ms=sorted(int(r[0]) for r in rows)
p=lambda q: ms[min(len(ms)-1, int(q*len(ms)))]
print(f"scatter-gather over 2 groups: queries={len(ms)} repos_answered={rows[0][1]} partial={set(r[2] for r in rows)} p50={p(0.5)} ms p99={p(0.99)} ms")
PY
    for p in $s0 $s1; do echo "shard server $p: $(grep -E 'VmRSS|VmHWM' /proc/$p/status | tr -s ' \n' ' ')"; done
  fi
  kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true
}
run 1
run 2
