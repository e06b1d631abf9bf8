#!/usr/bin/env python3
"""Localization of `ken context` on the dev set (../shared/eval), with the ablation runs.

    benches/eval_context.py --ws WS [--signals LIST ...] [--ken PATH] [--ids-from FILE]

WS holds one materialized, indexed checkout per task (<WS>/<id>/ with its .kenning index),
made once by benches/eval_context.sh (materialize.py --keep 1, then `ken index build`);
`ken context --format json` runs on each task's issue text and the ranked files and
functions are scored with the kit's score.py, per language. Each `--signals` value is one
run (e.g. `lexical`, `semantic`, `lexical,semantic,mentions`, or `all`); default: all signals.
A value may end in `@fused` or `@learned` to choose how the head of the list is ordered.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def preds(ken, ws, tasks, signals, budget):
    out, times = [], []
    for t in tasks:
        d = os.path.join(ws, t["id"])
        if not os.path.isdir(os.path.join(d, ".kenning")):
            print(f"skip {t['id']}: no index in {d}", file=sys.stderr)
            continue
        cmd = [ken, "context", "--repo", d, "--format", "json", "--budget", str(budget), "--files", "20", "--symbols", "100", "-q"]
        chosen, _, ranker = signals.partition("@")
        if chosen and chosen != "all":
            cmd += ["--signals", chosen]
        if ranker:
            cmd += ["--ranker", ranker]
        s = time.time()
        r = subprocess.run(cmd + ["--", t["query"]], capture_output=True, text=True)
        times.append(time.time() - s)
        try:
            v = json.loads(r.stdout)
        except json.JSONDecodeError:
            v = {}
        files = [f["path"] for f in v.get("files", [])]
        functions = []
        for s_ in v.get("symbols", []):
            if s_.get("kind") in ("function", "method"):
                key = f'{s_["path"]}::{s_["local_name"]}'
                if key not in functions:
                    functions.append(key)
        out.append({"id": t["id"], "files": files, "functions": functions})
    return out, times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ws", required=True)
    ap.add_argument("--eval", default=os.path.join(HERE, "..", "..", "shared", "eval"))
    ap.add_argument("--ken", default=None)
    ap.add_argument("--signals", action="append", default=None)
    ap.add_argument("--budget", type=int, default=8000)
    ap.add_argument("--out", default="/tmp/ken-eval-context")
    ap.add_argument("--language", choices=["python", "rust"])
    a = ap.parse_args()
    ken = a.ken or os.path.join(
        json.loads(subprocess.check_output(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=HERE))[
            "target_directory"
        ],
        "release",
        "ken",
    )
    tasks = [json.loads(l) for l in open(os.path.join(a.eval, "dev.jsonl"))]
    if a.language:
        tasks = [t for t in tasks if t["language"] == a.language]
    os.makedirs(a.out, exist_ok=True)
    for signals in a.signals or [""]:
        p, times = preds(ken, a.ws, tasks, signals, a.budget)
        name = signals.replace(",", "+").replace("@", "-") or "all"
        path = os.path.join(a.out, f"preds-{name}.jsonl")
        with open(path, "w") as f:
            for x in p:
                f.write(json.dumps(x) + "\n")
        times.sort()
        print(f"== signals {name}: {len(p)} tasks, ken context p50 {times[len(times)//2]*1000:.0f} ms, "
              f"p95 {times[int(len(times)*0.95)]*1000:.0f} ms (process, incl. start)", flush=True)
        subprocess.run([sys.executable, os.path.join(a.eval, "score.py"), "--gold", os.path.join(a.eval, "dev.jsonl"),
                        "--pred", path, "--by", "language"])


if __name__ == "__main__":
    main()
