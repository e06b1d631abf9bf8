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
  rust-lang/regex:rust@2b527599eb9eea0dcc288c704584f242f26a5c61
  serde-rs/json:rust@827a315bf2198558f0325b07bcc1e2cd973aba2f
  tokio-rs/axum:rust@3d78036dcac289d6c1d54934708acb6a5bd73686
  hyperium/hyper:rust@8fcaf1a62787b824fdd7b95a3e7c9ea81acd3449
  starship/starship:rust@6f33dcec91b758ccbae4ed850eaa6feabff798f9
  helix-editor/helix:rust@079a789e8cb08ead67f19e1971a1b7438b37354b
  rust-lang/cargo:rust@af373f761aa4e42b093c2e453078fd73c8ce54dd
  pallets/click:python@2c8cd3ac958a7eb316d67f2d316c27086c4c0369
  psf/black:python@8947c48ef2077c3a301b03c1e814dc2e3f78436e
  encode/httpx:python@ae1b9f66238f75ced3ced5e4485408435de10768
  pallets/jinja:python@5ef70112a1ff19c05324ff889dd30405b1002044
  python-attrs/attrs:python@c1dc5dcba16ed827aa6dcad896b41a3afedb4e32
  Textualize/rich:python@42899d8a0a96b121a514516f4be9db44ff7aeaf3
  aio-libs/aiohttp:python@495e778360d1924da63e16dba0f0d76baf56a56a
  scrapy/scrapy:python@11079cb1c85b9e75a39a7269943c69d1a975d485
  python-poetry/poetry:python@f46702336862f30050d5c641d5ed6f7568ded793
)
args=()
for r in "${REPOS[@]}"; do args+=(--repo "$r"); done
python3 benches/ranker/mine.py --mirrors "$EVAL_MIRRORS" --out "$OUT/mined" --work "$OUT/work" \
  --per-repo 200 --since-commits 10000 --ken "$KEN" "${args[@]}"
"$OUT/venv/bin/python" benches/ranker/train.py --data "$OUT/mined" --rounds 100 --leaves 7 --lr 0.1 \
  --report "$OUT/validation.md"
