#!/usr/bin/env python3
"""Mine pseudo-tasks for the learned file ranker from the history of public repositories.

    benches/ranker/mine.py --mirrors DIR --repo OWNER/NAME:LANG [--repo ...] --out OUT
                           [--per-repo 40] [--ken PATH] [--since-commits 4000]

A pseudo-task is a commit that changed 1 to 4 existing source files of the repository's
language (tests excluded) and whose message says something (four words or more, not a
release, merge, bump or formatting commit): its message is the query, the source files it
modified are the gold. The repository is checked out at the commit's parent, with history
ending there (the commit itself is not in it), indexed with `ken index build`
(incrementally from the previous task's checkout), and `ken context --features` gives every
candidate's feature vector, once with every signal and once without the history ones (as on
a plain tree). One JSON line per task and variant goes to OUT/<owner>+<name>.jsonl.

Mirrors are bare clones at DIR/<owner>+<name>/repo (the eval kit's layout). Mine only
repositories that are in no evaluation and no public localization benchmark (see
models/file-ranker/PROVENANCE.md for the list used).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

TEST = re.compile(r"(^|/)(tests?|testing|__tests__|spec|benches|examples?|docs?)/|(^|/)test_[^/]*$|_tests?\.(py|rs)$|(^|/)conftest\.py$")
SKIP = re.compile(r"^(merge|bump|release|prepare|version|update changelog|changelog|revert|format|reformat|run black|apply black|lint|typo|docs?[:(]|chore|ci[:(]|style)", re.I)
EXT = {"python": (".py",), "rust": (".rs",)}


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, errors="replace", check=True).stdout


def clean_message(msg):
    lines = [l for l in msg.splitlines() if not re.match(r"^\s*(signed-off-by|co-authored-by|reviewed-by|change-id):", l, re.I)]
    text = "\n".join(lines).strip()
    return re.sub(r"\s*\(#\d+\)", "", text)


def candidates(mirror, lang, limit, head):
    out = git(mirror, "log", "--no-merges", "--no-renames", "--name-status", "-z", "-n", str(limit),
              "--format=%x1e%H%x1f%P%x1f%ct%x1f%B%x1f", head)
    tasks = []
    for rec in out.split("\x1e")[1:]:
        parts = rec.split("\x1f", 4)
        if len(parts) < 5:
            continue
        sha, parents, ct, msg, rest = parts
        if len(parents.split()) != 1:
            continue
        fields = [f for f in rest.strip("\n").split("\0")]
        fields = [f.strip("\n") for f in fields if f.strip("\n")]
        changes = list(zip(fields[0::2], fields[1::2]))
        if not changes or len(changes) > 12:
            continue
        src = [(s, p) for s, p in changes if p.endswith(EXT[lang]) and not TEST.search(p)]
        if not src or len(src) > 4 or any(s != "M" for s, _ in src):
            continue
        msg = clean_message(msg)
        subject = msg.splitlines()[0] if msg else ""
        if SKIP.match(subject) or len(re.findall(r"[A-Za-z]{2,}", msg)) < 4:
            continue
        tasks.append({"sha": sha, "parent": parents.strip(), "time": int(ct), "query": msg,
                      "gold": sorted(p for _, p in src)})
    return tasks


def spread(tasks, n):
    if len(tasks) <= n:
        return tasks
    step = len(tasks) / n
    return [tasks[int(i * step)] for i in range(n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirrors", required=True)
    ap.add_argument("--repo", action="append", required=True,
                    help="OWNER/NAME:python|rust[@COMMIT] (the newest commit looked at; default HEAD)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--per-repo", type=int, default=40)
    ap.add_argument("--since-commits", type=int, default=4000, help="newest commits looked at")
    ap.add_argument("--ken", default="ken")
    ap.add_argument("--work", default="/tmp/ken-mine-work")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    for spec in a.repo:
        spec, _, head = spec.partition("@")
        name, lang = spec.split(":")
        slug = name.replace("/", "+")
        mirror = os.path.join(a.mirrors, slug, "repo")
        head = git(mirror, "rev-parse", head or "HEAD").strip()
        tasks = spread(candidates(mirror, lang, a.since_commits, head), a.per_repo)
        tasks.sort(key=lambda t: t["time"])
        wdir = os.path.join(a.work, slug)
        if not os.path.isdir(wdir):
            subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", mirror, wdir], check=True)
        out_path = os.path.join(a.out, f"{slug}.jsonl")
        t0 = time.time()
        with open(out_path, "w") as out:
            for i, t in enumerate(tasks):
                # Snapshots may lack big blobs (data files): the checkout then reports them and
                # goes on; what matters is that HEAD is the parent.
                subprocess.run(["git", "-C", wdir, "checkout", "-q", "--detach", "-f", t["parent"]],
                               capture_output=True)
                if git(wdir, "rev-parse", "HEAD").strip() != t["parent"]:
                    print(f"  {slug} {t['sha'][:10]}: cannot check out the parent", file=sys.stderr)
                    continue
                subprocess.run(["git", "-C", wdir, "clean", "-qfdx", "-e", ".kenning"], check=True)
                b = subprocess.run([a.ken, "-q", "index", "build", wdir], capture_output=True, text=True)
                if b.returncode != 0:
                    print(f"  {slug} {t['sha'][:10]}: build failed: {b.stderr.strip()[:200]}", file=sys.stderr)
                    continue
                # Twice: with every signal, and without the history ones (a plain tree's case,
                # so the model also learns to rank where there is no history).
                for variant, signals in (("", None), ("-nohistory", "lexical,semantic,mentions,graph,prior")):
                    cmd = [a.ken, "context", "--repo", wdir, "--format", "json", "--features", "--ranker", "fused",
                           "--files", "50", "--symbols", "1", "-q"]
                    if signals:
                        cmd += ["--signals", signals]
                    r = subprocess.run(cmd + ["--", t["query"]], capture_output=True, text=True)
                    try:
                        v = json.loads(r.stdout)
                    except json.JSONDecodeError:
                        print(f"  {slug} {t['sha'][:10]}: context failed: {r.stderr.strip()[:200]}", file=sys.stderr)
                        continue
                    files = [{"path": f["path"], "features": f["features"]} for f in v.get("files", []) if f.get("features")]
                    out.write(json.dumps({"id": f"{slug}@{t['sha'][:12]}{variant}", "repo": name, "language": lang,
                                          "commit": t["sha"], "gold": t["gold"], "files": files,
                                          "signals": v.get("signals", {})}) + "\n")
                out.flush()
        print(f"{name}: {len(tasks)} tasks from {tasks[0]['sha'][:10] if tasks else '-'} to "
              f"{tasks[-1]['sha'][:10] if tasks else '-'} (newest looked at: {head}), {time.time() - t0:.0f} s",
              flush=True)


if __name__ == "__main__":
    main()
