#!/usr/bin/env bash
# Reproduces the shipped file ranker (models/file-ranker/model.json):
#   EVAL_MIRRORS=/path/to/mirrors benches/ranker/run.sh [OUT]
# Mines pseudo-tasks from the history of the repositories listed in
# models/file-ranker/PROVENANCE.md, each up to the commit it names (bare clones at $EVAL_MIRRORS/<owner>+<name>/repo, e.g.
# from `git clone --mirror`), then trains LambdaMART on them with leave-one-repository-out
# validation and writes the model. Needs python3 with lightgbm and numpy (a venv is made in
# OUT/venv). Then `cargo build --release` embeds the new model.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-/tmp/ken-ranker}
: "${EVAL_MIRRORS:?set EVAL_MIRRORS to the folder holding <owner>+<name>/repo mirrors}"
cargo build --release --quiet --bin ken
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
KEN="$TARGET/release/ken"
[ -x "$OUT/venv/bin/python" ] || { python3 -m venv "$OUT/venv" && "$OUT/venv/bin/pip" install -q lightgbm numpy; }
REPOS=(
  Textualize/rich:python@42899d8a0a96b121a514516f4be9db44ff7aeaf3
  Textualize/textual:python@1d99508b928a771b51e1a527319c6b87dcff9e05
  scrapy/scrapy:python@11079cb1c85b9e75a39a7269943c69d1a975d485
  python-poetry/poetry:python@f46702336862f30050d5c641d5ed6f7568ded793
  tqdm/tqdm:python@f6a30fab726ab8e794a9db88b4392ce207760937
  hyperium/hyper:rust@8fcaf1a62787b824fdd7b95a3e7c9ea81acd3449
  starship/starship:rust@6f33dcec91b758ccbae4ed850eaa6feabff798f9
  helix-editor/helix:rust@079a789e8cb08ead67f19e1971a1b7438b37354b
  rust-lang/cargo:rust@af373f761aa4e42b093c2e453078fd73c8ce54dd
  rust-lang/mdBook:rust@641d06abe7d10d981ed61dd2711a30e4119666cd
)
args=()
for r in "${REPOS[@]}"; do args+=(--repo "$r"); done
python3 benches/ranker/mine.py --mirrors "$EVAL_MIRRORS" --out "$OUT/mined" --work "$OUT/work" \
  --per-repo ${PER_REPO:-150} --since-commits 10000 --ken "$KEN" "${args[@]}"
"$OUT/venv/bin/python" benches/ranker/train.py --data "$OUT/mined" --rounds 100 --leaves 7 --lr 0.1 \
  --report "$OUT/validation.md"
