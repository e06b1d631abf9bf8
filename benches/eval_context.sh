#!/usr/bin/env bash
# The dev set (../shared/eval) through `ken context`, with the ablation table:
#   EVAL_MIRRORS=/path/to/mirrors benches/eval_context.sh [WS] [--plain]
# Materializes every task's base commit into WS (default /tmp/ken-eval-ws, kept, so later
# runs skip this) as a git checkout whose history ends there (`materialize.py --git`; with
# --plain a plain tree, and no history part), builds each index once (all parts), then
# benches/eval_context.py runs `ken context` per task with each signal set and ranker and
# scores files and functions per language with the kit's score.py. Mirrors:
# <mirrors>/<owner>+<name>/repo (see the eval README).
set -euo pipefail
cd "$(dirname "$0")/.."
EVAL=${KEN_EVAL:-../shared/eval}
WS=${1:-/tmp/ken-eval-ws}
GIT=--git
[ "${2:-}" = "--plain" ] && GIT=
: "${EVAL_MIRRORS:?set EVAL_MIRRORS to the folder holding <owner>+<name>/repo mirrors}"
cargo build --release --quiet --bin ken
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
KEN="$TARGET/release/ken"
python3 "$EVAL/materialize.py" --mirror-root "$EVAL_MIRRORS" --all --out "$WS" --keep 1 $GIT \
  --cmd "$KEN -q index build {dir} >/dev/null" >/dev/null
python3 benches/eval_context.py --ws "$WS" --ken "$KEN" --eval "$EVAL" \
  --signals lexical@fused --signals lexical,semantic,mentions@fused \
  --signals lexical,semantic,mentions,history@fused --signals all@fused --signals all@learned
