#!/usr/bin/env bash
# Installs the test runners that tests/impact_runners.rs drives with the commands `ken impact`
# suggests, into a cache folder:
#   - pytest in a Python venv (PyPI; every package pinned in .ci/test-runners/requirements.txt),
#   - mocha and jest (npm; the whole tree pinned by .ci/test-runners/package-lock.json),
#   - Go from Debian's golang-go when `go` is not on PATH (apt; needs root).
# cargo is the toolchain's own. Idempotent: each part is skipped while its stamp matches.
# Usage: .ci/install_test_runners.sh [CACHE_DIR]    (default $HOME/.cache/kenning-runners)
# stdout carries only shell assignments, so `eval "$(.ci/install_test_runners.sh)"` works:
#   KEN_RUNNER_PATH=...          folders to put before PATH (pytest, go)
#   KEN_RUNNER_NODE_MODULES=...  a node_modules folder holding mocha and jest
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
PINS="$HERE/test-runners"
CACHE="${1:-$HOME/.cache/kenning-runners}"
mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"
PYTHON="${PYTHON:-python3}"
log() { echo "install_test_runners: $*" >&2; }
hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

VENV="$CACHE/venv"
want="$("$PYTHON" -c 'import sys; print(sys.version.split()[0])') $(hash_of "$PINS/requirements.txt")"
if [[ -x "$VENV/bin/pytest" && "$(cat "$VENV/.stamp" 2>/dev/null)" == "$want" ]]; then
  log "pytest up to date"
else
  log "installing pytest"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --only-binary=:all: -r "$PINS/requirements.txt" >&2
  echo "$want" > "$VENV/.stamp"
fi

NODE="$CACHE/node"
want="$(node --version) $(hash_of "$PINS/package.json" "$PINS/package-lock.json")"
if [[ -x "$NODE/node_modules/.bin/mocha" && "$(cat "$NODE/.stamp" 2>/dev/null)" == "$want" ]]; then
  log "mocha and jest up to date"
else
  log "installing mocha and jest"
  rm -rf "$NODE"
  mkdir -p "$NODE"
  cp "$PINS/package.json" "$PINS/package-lock.json" "$NODE/"
  (cd "$NODE" && npm ci --no-audit --no-fund --silent >&2)
  echo "$want" > "$NODE/.stamp"
fi

if ! command -v go >/dev/null 2>&1; then
  log "installing Go (Debian golang-go)"
  apt-get install -y -qq golang-go >&2 || { apt-get update -qq >&2 && apt-get install -y -qq golang-go >&2; }
fi
GO_BIN="$(dirname "$(command -v go)")"

echo "KEN_RUNNER_PATH=$VENV/bin:$GO_BIN"
echo "KEN_RUNNER_NODE_MODULES=$NODE/node_modules"
