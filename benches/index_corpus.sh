#!/usr/bin/env bash
# End-to-end indexing benchmark on real corpora no one here wrote.
#
#   benches/index_corpus.sh [CORPUS_DIR...]
#
# Without arguments it prepares two corpora under ${KEN_CORPORA:-/tmp/ken-corpora}:
#   django   the Django 5.1.4 sdist from PyPI (Python, ~470k lines)
#   cratesrc every crate this repository depends on, via `cargo vendor` (Rust, C)
#   both     the two side by side (hard links)
# and for each prints, in one table: the bare tree-sitter parse pass (examples/parse_floor.rs:
# walk + read + parse, nothing else: the floor of this design), universal-ctags, and `ken index
# build`: full with symbols only, with the code graph, and with every part (graph + lexical),
# no-change and one-file-change rebuilds, with files/s, lines/s, peak RSS and index size
# (index size: every part). Below the table, per corpus: the graph phase alone (resolution,
# PageRank, writing) against the parse floor, the graph's size on disk, and the memory and
# time of loading it (`ken graph stats`).
# Threads: ${KEN_THREADS:-2}.
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${KEN_THREADS:-2}
CORPORA=${KEN_CORPORA:-/tmp/ken-corpora}
OUT=${KEN_BENCH_OUT:-/tmp/ken-bench}
mkdir -p "$CORPORA" "$OUT"

prepare() {
  if [ ! -d "$CORPORA/django" ]; then
    pip download --quiet --no-deps --no-binary :all: Django==5.1.4 -d "$CORPORA/dl" >&2
    tar xzf "$CORPORA"/dl/Django-5.1.4.tar.gz -C "$CORPORA"
    mv "$CORPORA/Django-5.1.4" "$CORPORA/django"
  fi
  if [ ! -d "$CORPORA/cratesrc" ]; then
    cargo vendor --versioned-dirs --quiet "$CORPORA/cratesrc" >/dev/null
  fi
  if [ ! -d "$CORPORA/both" ]; then
    mkdir -p "$CORPORA/both"
    cp -al "$CORPORA/django" "$CORPORA/both/django"
    cp -al "$CORPORA/cratesrc" "$CORPORA/both/cratesrc"
  fi
  echo "$CORPORA/django" "$CORPORA/cratesrc" "$CORPORA/both"
}

if [ $# -eq 0 ]; then set -- $(prepare); fi

cargo build --release --quiet --bin ken --example parse_floor
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
KEN="$TARGET/release/ken"
FLOOR="$TARGET/release/examples/parse_floor"

# run LABEL CMD... -> "seconds peak_rss_mib"
measure() {
  local log="$OUT/time.log"
  /usr/bin/time -f '%e %M' -o "$log" "$@" >"$OUT/last.out" 2>"$OUT/last.err" || { cat "$OUT/last.err" >&2; return 1; }
  awk '{printf "%s %.0f\n", $1, $2/1024}' "$log"
}

printf '| corpus | files | lines | step | seconds | files/s | lines/s | peak RSS MiB | index MiB | vs parse floor |\n'
printf '|---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n'
for corpus in "$@"; do
  name=$(basename "$corpus")
  idx="$OUT/idx-$name"
  rm -rf "$idx"
  read -r floor_s floor_rss < <(measure "$FLOOR" "$corpus" "$THREADS")
  read -r ctags_s ctags_rss < <(measure ctags -R --languages=Python,Rust,C,C++,Go,Java,JavaScript,TypeScript -f "$OUT/tags-$name" "$corpus")
  read -r sym_s sym_rss < <(measure "$KEN" -q index build "$corpus" --index-dir "$idx-sym" -j "$THREADS" --full --no-lexical --no-graph)
  rm -rf "$idx-sym"
  read -r gr_s gr_rss < <(measure "$KEN" -q index build "$corpus" --index-dir "$idx-sym" -j "$THREADS" --full --no-lexical --json)
  graph_ms=$(python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["manifest"]["parts"]["graph"]; print(g["total_ms"], g["update"]["resolve_ms"], g["update"]["rank_ms"], g["bytes"])' "$OUT/last.out")
  read -r gstats_s gstats_rss < <(measure "$KEN" graph stats --index-dir "$idx-sym" --repo "$corpus")
  rm -rf "$idx-sym"
  read -r full_s full_rss < <(measure "$KEN" -q index build "$corpus" --index-dir "$idx" -j "$THREADS" --full --json)
  files=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifest"]["summary"]["files"])' "$OUT/last.out")
  lines=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifest"]["summary"]["lines"])' "$OUT/last.out")
  size=$(du -sm "$idx" | cut -f1)
  read -r noop_s noop_rss < <(measure "$KEN" -q index build "$corpus" --index-dir "$idx" -j "$THREADS")
  # One-file change: append a comment to a sizeable Python or Rust file, then restore it.
  victim=$(find "$corpus" \( -name '*.py' -o -name '*.rs' \) -size +20k -print -quit)
  cp -p "$victim" "$OUT/victim.bak"
  rm -f "$victim" && cp "$OUT/victim.bak" "$victim"   # break the hard link before editing
  printf '\n' >>"$victim"
  read -r one_s one_rss < <(measure "$KEN" -q index build "$corpus" --index-dir "$idx" -j "$THREADS")
  rm -f "$victim" && cp -p "$OUT/victim.bak" "$victim"
  row() { # step seconds rss
    python3 - "$name" "$files" "$lines" "$1" "$2" "$3" "$size" "$floor_s" <<'PY'
import sys
name, files, lines, step, s, rss, size, floor = sys.argv[1:]
s = float(s); files = int(files); lines = int(lines); floor = float(floor)
fs = f"{files/s:,.0f}" if s > 0 else "-"
ls = f"{lines/s:,.0f}" if s > 0 else "-"
print(f"| {name} | {files:,} | {lines:,} | {step} | {s:.2f} | {fs} | {ls} | {rss} | {size if step.startswith('ken') else '-'} | {s/floor:.2f}x |")
PY
  }
  row "tree-sitter parse only" "$floor_s" "$floor_rss"
  row "universal-ctags -R" "$ctags_s" "$ctags_rss"
  row "ken build (full, symbols only)" "$sym_s" "$sym_rss"
  row "ken build (full, symbols + graph)" "$gr_s" "$gr_rss"
  row "ken build (full, graph + lexical)" "$full_s" "$full_rss"
  row "ken rebuild, no change" "$noop_s" "$noop_rss"
  row "ken rebuild, 1 file changed" "$one_s" "$one_rss"
  python3 -c "import sys; print(f'<!-- {sys.argv[1]}: full/no-change = {float(sys.argv[2])/max(float(sys.argv[3]),0.001):.1f}x -->')" "$name" "$full_s" "$noop_s"
  read -r g_total g_resolve g_rank g_bytes <<<"$graph_ms"
  python3 -c "import sys; n,t,r,k,b,f,gs,gr=sys.argv[1:]; print(f'<!-- {n}: graph phase {int(t)/1000:.2f} s (resolve {int(r)/1000:.2f} s, rank {int(k)/1000:.2f} s) = {int(t)/1000/float(f):.2f}x the parse floor; graph.bin {int(b)/2**20:.0f} MiB; ken graph stats {gs} s, {gr} MiB -->')" \
    "$name" "$g_total" "$g_resolve" "$g_rank" "$g_bytes" "$floor_s" "$gstats_s" "$gstats_rss"
done
