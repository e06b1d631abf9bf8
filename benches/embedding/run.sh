#!/usr/bin/env bash
# Reproduces the code-trained static embedding model and its validation:
#   EVAL_MIRRORS=/path/to/mirrors benches/embedding/run.sh [OUT]
# Mines (description, code) pairs from the repositories below at the commits named
# (bare clones at $EVAL_MIRRORS/<owner>+<name>/repo), then fine-tunes potion-base-8M's rows on
# them (benches/embedding/train_static.py), six repositories held out for validation. Needs
# python3 with numpy, scipy and tokenizers (a venv is made in OUT/venv). On 2 CPU cores:
# mining about 20 s, training about 45 s. See benches/embedding/README.md for the figures.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-/tmp/ken-embedding}
: "${EVAL_MIRRORS:?set EVAL_MIRRORS to the folder holding <owner>+<name>/repo mirrors}"
mkdir -p "$OUT"
[ -x "$OUT/venv/bin/python" ] || { python3 -m venv "$OUT/venv" && "$OUT/venv/bin/pip" install -q numpy scipy tokenizers; }
REPOS=(
  Textualize/rich:python@42899d8a0a96b121a514516f4be9db44ff7aeaf3
  Textualize/textual:python@1d99508b928a771b51e1a527319c6b87dcff9e05
  scrapy/scrapy:python@11079cb1c85b9e75a39a7269943c69d1a975d485
  python-poetry/poetry:python@f46702336862f30050d5c641d5ed6f7568ded793
  tqdm/tqdm:python@f6a30fab726ab8e794a9db88b4392ce207760937
  numpy/numpy:python@1f90bbb55e65e7de68921bc3f1a2d94492fdf689
  hyperium/hyper:rust@8fcaf1a62787b824fdd7b95a3e7c9ea81acd3449
  starship/starship:rust@6f33dcec91b758ccbae4ed850eaa6feabff798f9
  helix-editor/helix:rust@079a789e8cb08ead67f19e1971a1b7438b37354b
  rust-lang/cargo:rust@af373f761aa4e42b093c2e453078fd73c8ce54dd
  rust-lang/mdBook:rust@641d06abe7d10d981ed61dd2711a30e4119666cd
  rust-lang/rust-analyzer:rust@d2e55da49132fa70a13dfbdc99122432b02cf464
  spf13/viper:go@528f7416c4b56a4948673984b190bf8713f0c3c4
  gohugoio/hugo:go@7b5199fdeff7d7682e9f979f468d55bc7b67b934
  prometheus/client_golang:go@89c60c0554699c74fa3d4eec472b98a3108905e3
  apache/commons-io:java@d83aeb6f4774aee75d857b29fb6cd89132c9a91b
  apache/commons-collections:java@cf36204c913a268681f9e7786f48383d6a464ed4
  google/guice:java@621416a2408952eec8007e06e81f4dc21baa8ab0
  lodash/lodash:javascript@9429a4ee03056e5b7be9a85a54571d7630f05983
  moment/moment:javascript@18aba135ab927ffe7f868ee09276979bed6993a6
  date-fns/date-fns:typescript@dd66398305c2b015fba3c1b3d31ccff42ee8d4cf
  typeorm/typeorm:typescript@281bfba42a5813b106bcf5ba79bc7f7251bd1e73
  vuejs/core:typescript@e2bede96134f757aad5c5b33ac9be055022dbfc8
  lua/lua:c@53b41d0cddd80bf33fdc631bdd32e3ba53842b89
  facebook/zstd:c@2dddf0905619b70c25faeca7f1a39601dc97616f
  libevent/libevent:c@0c3e47ad5f654714e39bae3f8689a3446599b614
  google/leveldb:cpp@78a352f47ed6c1e9d750545e9b242289185b87e1
  google/googletest:cpp@7260682388d493f155be62c3ce2efc7c7a9a3dcf
  google/benchmark:cpp@267a11154f14269384879dc7f6b8d25acb3684db
)
args=()
for r in "${REPOS[@]}"; do args+=(--repo "$r"); done
python3 benches/embedding/mine_pairs.py --mirrors "$EVAL_MIRRORS" --out "$OUT/pairs.jsonl" \
  --per-repo 4000 --max-file-kb 600 "${args[@]}"
"$OUT/venv/bin/python" benches/embedding/train_static.py --pairs "$OUT/pairs.jsonl" \
  --base models/potion-base-8M-int8 --out "$OUT/model" --no-tests --epochs 8 --lr 0.1 --batch 256 --pull 0 \
  --holdout tqdm/tqdm,rust-lang/mdBook,spf13/viper,lodash/lodash,google/leveldb,lua/lua
