#!/usr/bin/env bash
# File and function localization on the dev set (../shared/eval): for each task, materialize
# the repository at its base commit, build the index, run `ken search` on the issue text, and
# score the ranked files and functions.
#   KEN_EVAL_MODE=lexical (default)  `ken search --files`
#   KEN_EVAL_MODE=plain              the reference: whole-file BM25, no priors
#   KEN_EVAL_MODE=all                one build per task (semantic part included), then lexical, semantic-only
#                                    (`--semantic`, files by best chunk) and `--hybrid`, each
#                                    scored separately
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
HERE=$(pwd)
search() { # mode flags -> the command that appends one prediction to preds-<mode>.jsonl
  echo "($KEN search --repo {dir} $2 --json --query-file {query_file} || true) | python3 $HERE/benches/to_pred.py {id} >> $OUT/preds-$1.jsonl"
}
if [ "$MODE" = all ]; then
  MODES="lexical semantic hybrid"
  CMD="$KEN -q index build {dir} >/dev/null && $(search lexical '--lexical --files --limit 20') && $(search semantic '--semantic --limit 200') && $(search hybrid '--hybrid --limit 20')"
else
  MODES="$MODE"
  CMD="$KEN -q index build {dir} --no-semantic >/dev/null && $(search "$MODE" "--lexical --files $EXTRA --limit 20")"
fi
for m in $MODES; do rm -f "$OUT/preds-$m.jsonl"; done
python3 "$EVAL/materialize.py" --all --out "$OUT/ws" --keep 0 "$@" --cmd "$CMD" >"$OUT/materialize.log" 2>&1
for m in $MODES; do
  echo "== $m: $OUT/preds-$m.jsonl ($(wc -l <"$OUT/preds-$m.jsonl") tasks)"
  python3 "$EVAL/score.py" --gold "$EVAL/dev.jsonl" --pred "$OUT/preds-$m.jsonl" --by language
done
