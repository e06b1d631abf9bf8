#!/usr/bin/env bash
# Installs moto's S3-compatible server (PyPI, every package pinned in
# .ci/s3-server/requirements.txt) into a venv in a cache folder, for tests/remote_snapshots.rs
# and tests/fleet.rs. Idempotent: skipped while its stamp matches.
# Usage: .ci/install_s3_server.sh [CACHE_DIR]    (default $HOME/.cache/kenning-s3)
# stdout carries only a shell assignment, so `eval "$(.ci/install_s3_server.sh)"` works:
#   KEN_S3_SERVER=...   the moto_server executable
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
exec "$HERE/pinned_venv.sh" "$HERE/s3-server/requirements.txt" "${1:-$HOME/.cache/kenning-s3}" moto_server KEN_S3_SERVER
