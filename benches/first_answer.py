#!/usr/bin/env python3
"""Time from `ken serve --mcp` start to the handshake, the tool list, and the first useful
answer, on a repository without an index (a fresh clone):

    benches/first_answer.py --ken target/release/ken --repo /path/to/fresh/clone [--query TEXT]

The repository must have no `.kenning` folder (the script refuses otherwise, so a second run
does not measure a warm start by mistake; delete the folder to measure again). The first
useful answer is the first `search` call that is not an error: calls are made one after
another from the moment the tool list arrives, each waiting up to the server's deadline.
"""
import argparse
import json
import os
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ken", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--query", default="parse the configuration file")
    a = ap.parse_args()
    if os.path.exists(os.path.join(a.repo, ".kenning")):
        sys.exit(f"{a.repo} already has an index (.kenning): remove it to measure a first start")
    t0 = time.perf_counter()
    p = subprocess.Popen([a.ken, "serve", "--mcp", "--no-watch", "--repo", a.repo], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def ask(msg):
        p.stdin.write(json.dumps(msg) + "\n")
        p.stdin.flush()
        if "id" not in msg:
            return None
        while True:
            r = json.loads(p.stdout.readline())
            if r.get("id") == msg["id"]:
                return r

    ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    t_init = time.perf_counter() - t0
    ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
    ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    t_list = time.perf_counter() - t0
    calls = 0
    while True:
        calls += 1
        r = ask({"jsonrpc": "2.0", "id": 10 + calls, "method": "tools/call",
                 "params": {"name": "search", "arguments": {"query": a.query}}})
        if not r["result"].get("isError"):
            break
    t_answer = time.perf_counter() - t0
    p.stdin.close()
    p.wait()
    print(json.dumps({"repo": a.repo, "initialize_s": round(t_init, 3), "tools_list_s": round(t_list, 3),
                      "first_answer_s": round(t_answer, 2), "search_calls": calls}))


if __name__ == "__main__":
    main()
