#!/usr/bin/env bash
# File and function localization on the dev set (../shared/eval), lexical only:
# for each task, materialize the repository at its base commit, build the index, run
# `ken search --files --json --query-file ISSUE`, and score the ranked files and functions.
#
#   EVAL_MIRRORS=/path/to/mirrors benches/eval_localization.sh [extra materialize.py args]
#
# Mirrors are bare clones laid out as <mirrors>/<owner>+<name>/repo (see the eval README).
set -euo pipefail
cd "$(dirname "$0")/.."
EVAL=${KEN_EVAL:-../shared/eval}
OUT=${KEN_EVAL_OUT:-/tmp/ken-eval}
: "${EVAL_MIRRORS:?set EVAL_MIRRORS to the folder holding <owner>+<name>/repo mirrors}"
mkdir -p "$OUT"
cargo build --release --quiet --bin ken
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
KEN="$TARGET/release/ken"
# KEN_EVAL_MODE=plain scores the reference ranking instead: whole-file BM25, no priors.
MODE=${KEN_EVAL_MODE:-lexical}
EXTRA=""
[ "$MODE" = plain ] && EXTRA="--plain-bm25"
PRED="$OUT/preds-$MODE.jsonl"
rm -f "$PRED"
HERE=$(pwd)
python3 "$EVAL/materialize.py" --all --out "$OUT/ws" --keep 0 "$@" \
  --cmd "$KEN -q index build {dir} >/dev/null && ($KEN search --repo {dir} --files $EXTRA --json --limit 20 --query-file {query_file} || true) | python3 $HERE/benches/to_pred.py {id} >> $PRED" \
  >"$OUT/materialize.log" 2>&1
echo "predictions: $PRED ($(wc -l <"$PRED") tasks)"
python3 "$EVAL/score.py" --gold "$EVAL/dev.jsonl" --pred "$PRED" --by language
