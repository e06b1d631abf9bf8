#!/usr/bin/env bash
# Lexical layer benchmark on a real corpus (default: the `both` corpus of index_corpus.sh,
# Django + the vendored crate sources, ~2.7M lines):
# - indexing time the lexical layer adds (full build with vs without it, same session),
# - lexical index size against the source size,
# - query latency p50/p95: identifier lookups, the dev set's issue texts, literal searches,
#   with ripgrep (`rg -F`) on the same tree as the literal baseline (install `ripgrep`).
#
#   benches/search_corpus.sh [CORPUS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=${1:-${KEN_CORPORA:-/tmp/ken-corpora}/both}
THREADS=${KEN_THREADS:-2}
EVAL=${KEN_EVAL:-../shared/eval}
[ -d "$CORPUS" ] || { echo "no corpus at $CORPUS: run benches/index_corpus.sh first" >&2; exit 1; }
cargo build --release --quiet --bin ken --example search_latency
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
KEN="$TARGET/release/ken"
secs() { /usr/bin/time -f '%e %M' -o /tmp/ken-time "$@" >/dev/null 2>&1; cat /tmp/ken-time; }
read -r without_s without_kb < <(secs "$KEN" -q index build "$CORPUS" -j "$THREADS" --full --no-lexical)
read -r with_s with_kb < <(secs "$KEN" -q index build "$CORPUS" -j "$THREADS" --full)
gen=$(cat "$CORPUS/.kenning/CURRENT")
lex_mb=$(du -sm "$CORPUS/.kenning/$gen/lexical" | cut -f1)
src_mb=$("$KEN" index status "$CORPUS" --json | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["summary"]["bytes"]/2**20))')
echo "corpus: $CORPUS"
echo "full build without lexical: ${without_s}s (peak $((without_kb / 1024)) MiB); with: ${with_s}s (peak $((with_kb / 1024)) MiB)"
python3 -c "import sys; w,o=float(sys.argv[1]),float(sys.argv[2]); print(f'lexical layer adds {w-o:.2f}s ({w/o:.2f}x of the build without it)')" "$with_s" "$without_s"
python3 -c "import sys; l,s=int(sys.argv[1]),int(sys.argv[2]); print(f'lexical index {l} MiB for {s} MiB of indexed source: {l/s:.2f}x')" "$lex_mb" "$src_mb"
RG=$(command -v rg || true) "$TARGET/release/examples/search_latency" "$CORPUS" "$EVAL/dev.jsonl" 200
