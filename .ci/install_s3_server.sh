#!/usr/bin/env bash
# Installs moto's S3-compatible server (PyPI, every package pinned in
# .ci/s3-server/requirements.txt) into a venv in a cache folder, for tests/remote_snapshots.rs.
# Idempotent: skipped while its stamp matches.
# Usage: .ci/install_s3_server.sh [CACHE_DIR]    (default $HOME/.cache/kenning-s3)
# stdout carries only a shell assignment, so `eval "$(.ci/install_s3_server.sh)"` works:
#   KEN_S3_SERVER=...   the moto_server executable
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
PINS="$HERE/s3-server/requirements.txt"
CACHE="${1:-$HOME/.cache/kenning-s3}"
mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"
PYTHON="${PYTHON:-python3}"
VENV="$CACHE/venv"
want="$("$PYTHON" -c 'import sys; print(sys.version.split()[0])') $(sha256sum "$PINS" | cut -d' ' -f1)"
if [[ -x "$VENV/bin/moto_server" && "$(cat "$VENV/.stamp" 2>/dev/null)" == "$want" ]]; then
  echo "install_s3_server: moto up to date" >&2
else
  echo "install_s3_server: installing moto" >&2
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --only-binary=:all: -r "$PINS" >&2
  echo "$want" > "$VENV/.stamp"
fi
echo "KEN_S3_SERVER=$VENV/bin/moto_server"
