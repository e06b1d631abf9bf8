#!/usr/bin/env python3
"""Load benchmark for `ken serve` (JSON API, loopback only, bounded in count and time).

    benches/serve_load.py --ken target/release/ken --repo DIR [--requests 1000] [--clients 16]

Starts `ken serve --http 127.0.0.1:0` on an indexed repository (it builds the index first if
there is none), discovers real names and paths in it, then sends REQUESTS mixed requests
from CLIENTS concurrent clients (search in four modes, symbol, callers, refs, deps, context,
impact, overview, read_span, index_status) while a writer edits files underneath so the
server rebuilds in the background. Reports throughput, p50/p99 per operation, failures (any
non-200 answer), whether every answer came from a complete, committed generation (its
generation is the one its coverage reports, its manifest exists, and no client ever sees
the generation go backwards), then save-to-queryable: a new function saved in a file, polled
with `symbol` until it is found. Finally the same queries as one-shot CLI processes, for
comparison. Restores every edited file at the end.
"""
import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time

READ_TIMEOUT = 120


class Server:
    def __init__(self, ken, repo, extra):
        self.proc = subprocess.Popen(
            [ken, "serve", "--http", "127.0.0.1:0", "--repo", repo, *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 1800
        self.port = None
        for line in self.proc.stderr:
            sys.stderr.write("  server: " + line)
            if line.startswith("listening on http://"):
                self.port = int(line.strip().rsplit(":", 1)[1])
                break
            if time.time() > deadline:
                break
        if self.port is None:
            raise SystemExit("ken serve did not start")
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Client:
    def __init__(self, port):
        self.port = port
        self.conn = None

    def post(self, op, body):
        for attempt in range(2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=READ_TIMEOUT)
                data = json.dumps(body).encode()
                self.conn.request("POST", f"/v1/{op}", body=data, headers={"Content-Type": "application/json"})
                r = self.conn.getresponse()
                return r.status, r.read()
            except (http.client.HTTPException, ConnectionError, OSError):
                self.conn = None
                if attempt == 1:
                    raise
        return 0, b""


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def discover(c):
    """Real function names and file paths from the index itself."""
    names, paths = [], []
    for word in ["parse", "request", "cache", "error", "format", "query", "field", "print", "simplify", "model"]:
        st, body = c.post("search", {"query": word, "mode": "symbols", "limit": 20})
        if st != 200:
            continue
        for h in json.loads(body)["hits"]:
            if h.get("kind") in ("function", "method") and h.get("qualified_name"):
                names.append(h["qualified_name"])
            paths.append(h["path"])
    names = sorted(set(names))
    paths = sorted(set(p for p in paths if "/tests/" not in p))
    if not names or not paths:
        raise SystemExit("found no definitions to query: is the repository indexed?")
    return names, paths


def make_requests(n, names, paths, rng):
    words = ["parse the query string", "cache invalidation", "raise an error when the field is missing",
             "format a date", "simplify an expression", "database connection", "render a template",
             "retry", "unicode", "migrations"]
    kinds = [
        ("search", lambda: {"query": rng.choice(words)}),
        ("search_lexical", lambda: {"query": rng.choice(words), "mode": "lexical"}),
        ("search_symbols", lambda: {"query": rng.choice(names).rsplit(".", 1)[-1], "mode": "symbols"}),
        ("search_literal", lambda: {"query": "def " + rng.choice(names).rsplit(".", 1)[-1], "mode": "literal", "limit": 50}),
        ("symbol", lambda: {"name": rng.choice(names)}),
        ("callers", lambda: {"symbol": rng.choice(names), "depth": 2}),
        ("refs", lambda: {"symbol": rng.choice(names), "limit": 100}),
        ("deps", lambda: {"file": rng.choice(paths)}),
        ("context", lambda: {"task": rng.choice(words) + " is wrong in " + rng.choice(names), "max_tokens": 4000}),
        ("impact", lambda: {"symbols": [rng.choice(names)]}),
        ("overview", lambda: {}),
        ("read_span", lambda: {"span": rng.choice(paths) + ":1-40"}),
        ("index_status", lambda: {}),
    ]
    weights = [6, 3, 3, 2, 4, 3, 2, 2, 2, 2, 1, 3, 1]
    out = []
    for _ in range(n):
        label, make = rng.choices(kinds, weights)[0]
        op = label.split("_")[0] if label.startswith("search") else label
        out.append((label, op, make()))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ken", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--edit-every", type=float, default=1.0, help="seconds between edits under load")
    ap.add_argument("--max-seconds", type=float, default=600)
    ap.add_argument("--saves", type=int, default=5)
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    repo = os.path.abspath(a.repo)
    index = os.path.join(repo, ".kenning")
    rng = random.Random(7)

    server = Server(a.ken, repo, [])
    originals = {}
    try:
        c0 = Client(server.port)
        names, paths = discover(c0)
        editable = [p for p in paths if p.endswith(".py")][:20] or paths[:20]
        reqs = make_requests(a.requests, names, paths, rng)
        # Warm every operation once (the first context opens the semantic part).
        for label, op, body in {r[0]: r for r in reqs}.values():
            c0.post(op, body)

        # Latency on a quiet server: each kind of request alone, one after another.
        quiet = {}
        for label, op, body in make_requests(400, names, paths, random.Random(11)):
            if len(quiet.get(label, [])) >= 20:
                continue
            t = time.perf_counter()
            st, _ = c0.post(op, body)
            if st == 200:
                quiet.setdefault(label, []).append((time.perf_counter() - t) * 1000)

        lat = {}
        failures = []
        incomplete = []
        backwards = [0]
        gens = set()
        lock = threading.Lock()
        queue = list(reversed(reqs))
        stop = threading.Event()
        t_end = time.time() + a.max_seconds

        def worker():
            c = Client(server.port)
            last = 0
            while time.time() < t_end:
                with lock:
                    if not queue:
                        return
                    label, op, body = queue.pop()
                t0 = time.perf_counter()
                try:
                    st, raw = c.post(op, body)
                except Exception as e:  # noqa: BLE001 - a failure is a figure here
                    st, raw = -1, str(e).encode()
                dt = (time.perf_counter() - t0) * 1000
                with lock:
                    lat.setdefault(label, []).append(dt)
                if st != 200:
                    with lock:
                        failures.append((label, st, raw[:200].decode("utf-8", "replace")))
                    continue
                v = json.loads(raw)
                g = v.get("generation")
                ok = isinstance(g, int) and v.get("coverage", {}).get("generation") == g and \
                    os.path.exists(os.path.join(index, f"gen-{g:08}", "manifest.json"))
                with lock:
                    gens.add(g)
                    if not ok:
                        incomplete.append((label, g))
                    if g < last:
                        backwards[0] += 1
                last = max(last, g)

        edits = [0]

        def writer():
            i = 0
            while not stop.is_set():
                p = os.path.join(repo, editable[i % len(editable)])
                if p not in originals:
                    with open(p, "rb") as f:
                        originals[p] = f.read()
                with open(p, "ab") as f:
                    f.write(f"\n\ndef _ken_load_probe_{i}():\n    return {i}\n".encode())
                edits[0] += 1
                i += 1
                stop.wait(a.edit_every)

        wt = threading.Thread(target=writer, daemon=True)
        wt.start()
        t0 = time.perf_counter()
        threads = [threading.Thread(target=worker) for _ in range(a.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        stop.set()
        wt.join()
        done = sum(len(v) for v in lat.values())

        # Save-to-queryable, one save at a time on a quiet server.
        time.sleep(3)
        saves = []
        for k in range(a.saves):
            p = os.path.join(repo, editable[(k * 7) % len(editable)])
            if p not in originals:
                with open(p, "rb") as f:
                    originals[p] = f.read()
            name = f"ken_saved_probe_{os.getpid()}_{k}"
            with open(p, "ab") as f:
                f.write(f"\n\ndef {name}():\n    return {k}\n".encode())
            ts = time.perf_counter()
            while True:
                st, raw = c0.post("symbol", {"name": name})
                if st == 200 and json.loads(raw)["hits"]:
                    saves.append((time.perf_counter() - ts) * 1000)
                    break
                if time.perf_counter() - ts > 60:
                    saves.append(float("inf"))
                    break
                time.sleep(0.01)
            time.sleep(1)
        st, raw = c0.post("index_status", {})
        last_refresh = json.loads(raw).get("last_refresh") if st == 200 else None
    finally:
        for p, data in originals.items():
            with open(p, "wb") as f:
                f.write(data)
        server.stop()

    # One-shot CLI processes for the same kinds of query, beside the server's figures.
    def cli(args):
        ts = []
        for _ in range(5):
            t = time.perf_counter()
            subprocess.run([a.ken, *args, "--repo", repo], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            ts.append((time.perf_counter() - t) * 1000)
        return statistics.median(ts)

    name = names[len(names) // 2]
    oneshot = {
        "search": cli(["search", "parse the query string", "--json"]),
        "context": cli(["context", "parse the query string is wrong", "--format", "json"]),
        "impact": cli(["impact", "--symbol", name, "--json"]),
        "symbol": cli(["symbol", name, "--json"]),
    }
    # Let the server's last rebuild of the restored files land before the next run.
    subprocess.run([a.ken, "-q", "index", "build", repo], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    print(f"\n{done} requests from {a.clients} clients in {wall:.1f} s: {done / wall:.1f} requests/s; "
          f"{len(failures)} failures; {edits[0]} edits underneath; generations seen {min(gens)}..{max(gens)} "
          f"({len(gens)}); answers not from a committed generation: {len(incomplete)}; went backwards: {backwards[0]}")
    print(f"\n| operation | one client: p50 ms | p90 ms | under load: requests | p50 ms | p99 ms | max ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label in sorted(lat):
        xs, q = lat[label], quiet.get(label, [])
        print(f"| {label} | {pct(q, 50):.1f} | {pct(q, 90):.1f} | {len(xs)} | {pct(xs, 50):.1f} | {pct(xs, 99):.1f} | {max(xs):.1f} |")
    print(f"\nsave-to-queryable (symbol found), {len(saves)} saves: "
          f"p50 {pct(saves, 50):.0f} ms, max {max(saves):.0f} ms; server's last refresh: {last_refresh}")
    print("one-shot CLI processes (median of 5): " + ", ".join(f"{k} {v:.0f} ms" for k, v in oneshot.items()))
    for f in failures[:10]:
        print("failure:", f)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"requests": done, "clients": a.clients, "seconds": wall, "failures": len(failures),
                       "incomplete": len(incomplete), "backwards": backwards[0], "generations": sorted(gens),
                       "latency_ms": {k: {"n": len(v), "p50": pct(v, 50), "p99": pct(v, 99)} for k, v in lat.items()},
                       "quiet_ms": {k: {"n": len(v), "p50": pct(v, 50), "p90": pct(v, 90)} for k, v in quiet.items()},
                       "save_to_queryable_ms": saves, "oneshot_ms": oneshot}, f, indent=1)
    return 1 if failures or incomplete or backwards[0] else 0


if __name__ == "__main__":
    sys.exit(main())
