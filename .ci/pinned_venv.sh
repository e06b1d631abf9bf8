#!/usr/bin/env bash
# Installs the PyPI packages pinned in PINS (binary wheels only) into CACHE/venv, unless its
# stamp (Python version and the pins' hash) matches, and prints `VAR=CACHE/venv/bin/EXE` on
# stdout (so `eval "$(...)"` works); everything else goes to stderr.
# Usage: .ci/pinned_venv.sh PINS CACHE EXE VAR
set -euo pipefail
PINS="$1"; CACHE="$2"; EXE="$3"; VAR="$4"
mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"
PYTHON="${PYTHON:-python3}"
VENV="$CACHE/venv"
want="$("$PYTHON" -c 'import sys; print(sys.version.split()[0])') $(sha256sum "$PINS" | cut -d' ' -f1)"
if [[ -x "$VENV/bin/$EXE" && "$(cat "$VENV/.stamp" 2>/dev/null)" == "$want" ]]; then
  echo "$EXE: up to date" >&2
else
  echo "$EXE: installing" >&2
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --only-binary=:all: -r "$PINS" >&2
  echo "$want" > "$VENV/.stamp"
fi
echo "$VAR=$VENV/bin/$EXE"
