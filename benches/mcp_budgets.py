#!/usr/bin/env python3
"""Token budgets over MCP on a real repository: every core tool at budgets from 100 to 8,000
tokens and at its default, counted as the model reads it.

    benches/mcp_budgets.py --ken target/release/ken --repo CLONE [--repo CLONE ...]

Starts `ken serve --mcp --no-watch` on each (indexed) repository, picks its arguments from the
repository itself (the first search hit's file and its first named span for symbol, callers,
refs, impact and read_span), and reports for each tool and budget the tokens the text blocks
carried (`_meta["kenning/tokens"].returned`, cl100k, the same counter the tests use) and
whether that stayed within the budget plus a tenth (defaults: within 4,000). Exit status 1 if
any answer went over.
"""
import argparse
import json
import subprocess
import sys

BUDGETS = [None, 100, 300, 1000, 4000, 8000]


class Mcp:
    def __init__(self, ken, repo):
        self.p = subprocess.Popen([ken, "serve", "--mcp", "--no-watch", "--repo", repo],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        self.id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def request(self, method, params):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its output")
            msg = json.loads(line)
            if msg.get("id") == self.id:
                return msg

    def call(self, tool, args):
        r = self.request("tools/call", {"name": tool, "arguments": args})
        return r.get("result") or {"isError": True, "error": r.get("error")}

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ken", required=True)
    ap.add_argument("--repo", action="append", required=True)
    ap.add_argument("--query", default="parse the configuration and report errors")
    a = ap.parse_args()
    over = 0
    print("| repository | tool | default | 100 | 300 | 1000 | 4000 | 8000 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for repo in a.repo:
        m = Mcp(a.ken, repo)
        first = m.call("search", {"query": a.query})["structuredContent"]["files"][0]
        path = first["path"]
        symbol = next((c["symbol"] for c in first.get("chunks", []) if c.get("symbol")), None)
        calls = [("search", {"query": a.query}),
                 ("context", {"task": a.query}),
                 ("overview", {}),
                 ("read_span", {"span": path})]
        if symbol:
            calls += [("symbol", {"name": symbol}), ("callers", {"symbol": symbol}),
                      ("refs", {"symbol": symbol}), ("impact", {"symbols": [symbol]})]
        for tool, args in calls:
            cells = []
            for b in BUDGETS:
                x = dict(args)
                if b is not None:
                    x["max_tokens"] = b
                r = m.call(tool, x)
                if r.get("isError"):
                    text = "".join(c.get("text", "") for c in r.get("content", []))
                    cells.append("error" if "ambiguous" not in text else "ambiguous")
                    continue
                n = r["_meta"]["kenning/tokens"]["returned"]
                limit = 4000 if b is None else b + b // 10
                bad = n > limit
                over += bad
                cells.append(f"{n}{' OVER' if bad else ''}")
            print(f"| {repo.rstrip('/').split('/')[-1]} | {tool} | " + " | ".join(cells) + " |")
            sys.stdout.flush()
        m.close()
    sys.exit(1 if over else 0)


if __name__ == "__main__":
    main()
