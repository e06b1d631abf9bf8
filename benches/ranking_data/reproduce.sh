#!/usr/bin/env bash
# The learned file ranker from nothing, in four steps, each resumable (measured 2026-12-06 on
# two cores: mining 264 repositories ~21 min with their fetch and snapshot checkouts; features
# 32 min with two workers and other builds beside them, over the 30-minute mark, so shard it
# with features.py --only when the machine is shared; plain-tree rows 4 min; training about
# 10 min for the shipped model, with a validation run beside it):
#
#   benches/ranking_data/reproduce.sh [STEP...]     # steps: mine features plain train (default: all)
#
# Environment: MIRRORS (bare mirrors, <owner>+<name>/repo; see run.sh), OUT (default
# /work/data/ranking, outside this repository), KEN (a release build of this ken; built when
# unset), VENV (a python venv with lightgbm and numpy; made when missing).
#   mine      run.sh with CHECKOUT=static: queries, snapshots, licences, the static checkouts
#   features  features.py: each repository indexed at its snapshots, every query ranked by
#             `ken rank-features`, docstring queries with their comments blanked
#   plain     features.py --plain-pass: a third of the static queries ranked as on a plain tree
#   train     train.py: leave-repositories-out validation by language and kind, the ablation,
#             and models/file-ranker/model.json (then `cargo build --release` embeds it)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${OUT:-/work/data/ranking}
VENV=${VENV:-$OUT/venv}
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(mine features plain train)
if [ -z "${KEN:-}" ]; then
  (cd "$ROOT" && cargo build --release --quiet --bin ken)
  KEN="$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/ken"
fi
for step in "${steps[@]}"; do
  echo "== $step ($(date -u +%H:%M:%S))" >&2
  case "$step" in
    mine) OUT="$OUT" CHECKOUT=static bash "$HERE/run.sh" ;;
    features) python3 "$HERE/features.py" --data "$OUT" --ken "$KEN" --per-kind 60 --snapshots 2 --jobs 2 ;;
    plain) python3 "$HERE/features.py" --data "$OUT" --ken "$KEN" --per-kind 60 --jobs 2 --plain-pass ;;
    train)
      [ -x "$VENV/bin/python" ] || { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q lightgbm numpy; }
      "$VENV/bin/python" "$HERE/train.py" --data "$OUT" --ablate --report "$OUT/validation.md" \
        --out "$ROOT/models/file-ranker/model.json" ;;
    *) echo "unknown step $step (mine features plain train)" >&2; exit 2 ;;
  esac
done
