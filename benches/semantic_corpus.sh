#!/usr/bin/env bash
# Semantic-part benchmark on real corpora no one here wrote (the corpora of index_corpus.sh).
#
#   benches/semantic_corpus.sh [CORPUS_DIR...]
#
# Per corpus: a full `ken index build --semantic` (the semantic phase from the manifest:
# chunks, chunk+tokenize+embed time, total with the HNSW build and write, sizes on disk), then
# examples/embed_speed.rs (embedding throughput, HNSW recall@10 against brute force, in-process
# query latency) and the wall time of `ken search --semantic` as a process.
# Threads: ${KEN_THREADS:-2}. Corpora default to ${KEN_CORPORA:-/tmp/ken-corpora}/{django,cratesrc}
# (run benches/index_corpus.sh once to fetch them).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${KEN_THREADS:-2}
CORPORA=${KEN_CORPORA:-/tmp/ken-corpora}
OUT=${KEN_BENCH_OUT:-/tmp/ken-bench}
mkdir -p "$OUT"
if [ $# -eq 0 ]; then set -- "$CORPORA/django" "$CORPORA/cratesrc"; fi
cargo build --release --quiet --bin ken --example embed_speed
# Keep the HNSW graph even below the scan threshold: this benchmark measures it.
export KEN_VECTOR_GRAPH=1
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
KEN="$TARGET/release/ken"
printf '| corpus | lines | chunks | chunk+tokenize+embed s | semantic phase s | vectors.bin MiB | graph MiB | build peak RSS MiB |\n|---|---:|---:|---:|---:|---:|---:|---:|\n'
for corpus in "$@"; do
  name=$(basename "$corpus"); idx="$OUT/sem-$name"; rm -rf "$idx"
  /usr/bin/time -f '%M' -o "$OUT/sem.rss" "$KEN" -q index build "$corpus" --index-dir "$idx" -j "$THREADS" --full --semantic --json >"$OUT/sem.json"
  python3 - "$OUT/sem.json" "$OUT/sem.rss" "$name" "$idx" <<'PY'
import json, os, sys
m = json.load(open(sys.argv[1]))["manifest"]; v = m["parts"]["vectors"]
gen = [d for d in os.listdir(sys.argv[4]) if d.startswith("gen-") and not d.endswith(".tmp")][0]
g = os.path.join(sys.argv[4], gen, "vectors")
graph = sum(os.path.getsize(os.path.join(g, f)) for f in os.listdir(g))
rss = int(open(sys.argv[2]).read().split()[-1]) / 1024
print(f"| {sys.argv[3]} | {m['summary']['lines']:,} | {v['chunks']:,} | {v['embed_ms']/1000:.1f} | {v['total_ms']/1000:.1f} | "
      f"{v['bytes']/2**20:.0f} | {graph/2**20:.0f} | {rss:.0f} |")
PY
done
echo
for corpus in "$@"; do
  echo "$(basename "$corpus"): $("$TARGET/release/examples/embed_speed" "$corpus" "$THREADS" | tr '\n' ' ')"
  idx="$OUT/sem-$(basename "$corpus")"
  for q in "parse a configuration file" "retry when the connection drops" "escape html in a template"; do
    s=$(date +%s.%N); "$KEN" search --semantic "$q" --index-dir "$idx" --repo "$corpus" --limit 5 >/dev/null
    printf '  ken search --semantic %q: %.2f s\n' "$q" "$(echo "$(date +%s.%N) - $s" | bc)"
  done
done
