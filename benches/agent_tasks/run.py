#!/usr/bin/env python3
"""Run the agent task suite against a real model and report success rate, model calls,
tokens and wall time per task.

    benches/agent_tasks/run.py --model openai:gpt-4o-mini [--ken target/release/ken] [TASK...]

Each task's repository is written to a fresh git checkout, `ken agent` runs it with the
task's test command as the evaluation (no script: the model decides), then the task's hidden
check runs. The model is configured as for `ken agent` (OPENAI_API_KEY / OPENAI_BASE_URL,
ANTHROPIC_API_KEY, OLLAMA_HOST).
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import tomllib

HERE = pathlib.Path(__file__).resolve().parent


def write_tree(root: pathlib.Path, spec: str) -> None:
    path, lines = None, []
    for line in spec.splitlines(keepends=True):
        if line.startswith("//- "):
            if path is not None:
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_text("".join(lines))
            path, lines = line[4:].strip(), []
        elif path is not None:
            lines.append(line)
    if path is not None:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("".join(lines))


def run_task(name: str, task: dict, ken: str, model: str, max_steps: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp) / name
        root.mkdir()
        write_tree(root, task["repo"])
        subprocess.run("git init -q -b work && git add -A && git -c user.email=t@t -c user.name=t commit -qm base",
                       shell=True, cwd=root, check=True)
        env = dict(os.environ, XDG_STATE_HOME=str(pathlib.Path(tmp) / "state"))
        env.pop("CARGO_TARGET_DIR", None)
        cmd = [ken, "agent", task["task"], "--json", "--model", model, "--repo", str(root),
               "--session", name, "--test-cmd", task["test_cmd"], "--max-steps", str(max_steps)]
        if task.get("approve_edits"):
            cmd.append("--approve-edits")
        start = time.time()
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
        wall = time.time() - start
        events = [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]
        fin = next((e for e in events if e.get("kind") == "finished"), {})
        write_tree(root, task.get("hidden", ""))
        check = subprocess.run(task["check"], shell=True, cwd=root, capture_output=True, env=env)
        return {
            "task": name,
            "state": fin.get("state", "crashed"),
            "check": check.returncode == 0,
            "model_calls": fin.get("steps", 0),
            "tokens": fin.get("input_tokens", 0) + fin.get("output_tokens", 0),
            "cost_usd": fin.get("cost_usd", 0.0),
            "wall_s": round(wall, 1),
            "reason": fin.get("reason", out.stderr[-300:]),
        }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--ken", default=str(HERE.parent.parent / "target/release/ken"))
    ap.add_argument("--max-steps", type=int, default=30)
    ap.add_argument("tasks", nargs="*")
    a = ap.parse_args()
    names = a.tasks or sorted(p.name for p in HERE.iterdir() if (p / "task.toml").exists())
    rows = []
    for name in names:
        task = tomllib.loads((HERE / name / "task.toml").read_text())
        r = run_task(name, task, a.ken, a.model, a.max_steps)
        rows.append(r)
        print(f"{name:<24} {r['state']:<10} check={'pass' if r['check'] else 'FAIL'} "
              f"calls={r['model_calls']} tokens={r['tokens']} ${r['cost_usd']:.4f} {r['wall_s']}s", flush=True)
    ok = sum(1 for r in rows if r["state"] == "completed" and r["check"])
    n = len(rows) or 1
    print(f"\nsuccess {ok}/{len(rows)} ({100 * ok / n:.0f}%) · average model calls "
          f"{sum(r['model_calls'] for r in rows) / n:.1f} · tokens {sum(r['tokens'] for r in rows)} · "
          f"wall {sum(r['wall_s'] for r in rows):.0f}s")
    json.dump(rows, sys.stderr if os.environ.get("AGENT_TASKS_JSON") else open(os.devnull, "w"), indent=1)
    return 0 if ok == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
