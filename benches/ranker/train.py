#!/usr/bin/env python3
"""Train the learned file ranker (LambdaMART, LightGBM) on mined pseudo-tasks, validate it
leave-one-repository-out, and export it in Kenning's tree format.

    python3 -m venv V && V/bin/pip install lightgbm numpy
    V/bin/python benches/ranker/train.py --data MINED_DIR [--out models/file-ranker/model.json]

MINED_DIR holds the JSONL files of benches/ranker/mine.py (one per repository). Each task's
candidates are the fused ranking's head with their feature vectors; a candidate is relevant
when it is among the files the commit changed. Validation: for each repository, a model
trained on the others reorders that repository's tasks; Acc@1, Acc@5 (every gold file in the
top k), Recall@5 and MRR are printed next to the fused order's. The exported model is then
trained on every repository.

Export format (`kenning-gbdt-1`, read by src/context/learned_ranker.rs): per tree a flat
list of nodes `[feature, threshold, left, right]`; a leaf has feature -1 and its value as
the threshold. `x <= threshold` goes left. Thresholds are rounded down to the nearest f32,
so Rust's f32 comparison takes the same branch as LightGBM's double one.
"""
import argparse
import glob
import json
import os
import sys

import lightgbm as lgb
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FEATURES_RS = os.path.join(HERE, "..", "..", "src", "context", "rank_features.rs")

PARAMS = dict(
    objective="lambdarank",
    metric="ndcg",
    ndcg_eval_at=[1, 5],
    learning_rate=0.05,
    num_leaves=15,
    min_data_in_leaf=20,
    feature_fraction=0.9,
    bagging_fraction=0.8,
    bagging_freq=1,
    lambdarank_truncation_level=20,
    verbose=-1,
    seed=7,
    deterministic=True,
    num_threads=2,
    rounds=150,
)
CANDIDATES = 50


def feature_names():
    text = open(FEATURES_RS).read()
    body = text.split("FEATURE_NAMES: &[&str] = &[", 1)[1].split("];", 1)[0]
    return [l.strip().strip('",') for l in body.splitlines() if l.strip()]


repo_lang = {}


def load(data):
    tasks = []
    for path in sorted(glob.glob(os.path.join(data, "*.jsonl"))):
        for line in open(path):
            t = json.loads(line)
            files = t["files"][:CANDIDATES]
            if not files:
                continue
            gold = set(t["gold"])
            y = [1 if f["path"] in gold else 0 for f in files]
            if not any(y):
                continue  # nothing to learn from: the gold is not among the candidates
            repo_lang[t["repo"]] = t["language"]
            tasks.append({"id": t["id"], "repo": t["repo"], "X": np.array([f["features"] for f in files], dtype=np.float32),
                          "y": np.array(y), "paths": [f["path"] for f in files], "gold": gold})
    return tasks


def train(tasks):
    X = np.vstack([t["X"] for t in tasks])
    y = np.concatenate([t["y"] for t in tasks])
    ds = lgb.Dataset(X, y, group=[len(t["y"]) for t in tasks], free_raw_data=False)
    params = {k: v for k, v in PARAMS.items() if k != "rounds"}
    return lgb.train(params, ds, num_boost_round=PARAMS["rounds"])


def metrics(order, t):
    ranked = [t["paths"][i] for i in order]
    gold = t["gold"]
    acc = lambda k: all(g in ranked[:k] for g in gold)
    rec5 = len([g for g in gold if g in ranked[:5]]) / len(gold)
    first = next((i for i, p in enumerate(ranked) if p in gold), None)
    return acc(1), acc(5), rec5, 0 if first is None else 1 / (first + 1)


def summarize(rows):
    n = len(rows)
    return [100 * sum(r[i] for r in rows) / n for i in range(4)] if n else [0, 0, 0, 0]


def to_kenning(booster, names, trained_on):
    dump = booster.dump_model()
    trees = []
    for info in dump["tree_info"]:
        nodes = []

        def walk(n):
            i = len(nodes)
            nodes.append(None)
            if "leaf_value" in n:
                nodes[i] = [-1, float(n["leaf_value"]), 0, 0]
                return i
            assert n["decision_type"] == "<=", n["decision_type"]
            th = float(n["threshold"])
            t32 = np.float32(th)
            if float(t32) > th:
                t32 = np.nextafter(t32, np.float32(-np.inf))
            left = walk(n["left_child"])
            right = walk(n["right_child"])
            nodes[i] = [int(n["split_feature"]), float(t32), left, right]
            return i

        walk(info["tree_structure"])
        trees.append(nodes)
    return {"format": "kenning-gbdt-1", "features": names, "trees": trees, "candidates": CANDIDATES,
            "trained_on": trained_on}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", default=os.path.join(HERE, "..", "..", "models", "file-ranker", "model.json"))
    ap.add_argument("--report", default=None, help="write the validation table (markdown) here")
    ap.add_argument("--rounds", type=int, default=PARAMS["rounds"])
    ap.add_argument("--leaves", type=int, default=PARAMS["num_leaves"])
    ap.add_argument("--lr", type=float, default=PARAMS["learning_rate"])
    ap.add_argument("--min-leaf", type=int, default=PARAMS["min_data_in_leaf"])
    ap.add_argument("--validate-only", action="store_true", help="print the validation, export nothing")
    a = ap.parse_args()
    PARAMS.update(num_leaves=a.leaves, learning_rate=a.lr, min_data_in_leaf=a.min_leaf, rounds=a.rounds)
    names = feature_names()
    tasks = load(a.data)
    if not tasks:
        sys.exit(f"no usable tasks in {a.data}")
    width = {len(t["X"][0]) for t in tasks}
    if width != {len(names)}:
        sys.exit(f"feature width {width} differs from FEATURE_NAMES ({len(names)}): re-mine with this ken")
    repos = sorted({t["repo"] for t in tasks})
    rows = {}  # (repo, variant) -> (fused rows, learned rows)
    for repo in repos:
        held = [t for t in tasks if t["repo"] == repo]
        model = train([t for t in tasks if t["repo"] != repo])
        for t in held:
            variant = "plain" if t["id"].endswith("-nohistory") else "git"
            f_rows, l_rows = rows.setdefault((repo, variant), ([], []))
            f_rows.append(metrics(list(range(len(t["paths"]))), t))
            s = model.predict(t["X"])
            # Ties keep the fused order, as in Rust.
            l_rows.append(metrics(sorted(range(len(s)), key=lambda i: (-s[i], i)), t))
    lines = []
    for variant, title in (("git", "with history (a git checkout)"), ("plain", "without history (a plain tree)")):
        lines += [f"Leave-one-repository-out, {title}:", "",
                  "| held-out repository | tasks | fused Acc@1 | learned Acc@1 | fused Acc@5 | learned Acc@5 | fused R@5 | learned R@5 | fused MRR | learned MRR |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        all_f, all_l = [], []
        for lang in ("python", "rust"):
            lang_f, lang_l = [], []
            for repo in repos:
                if (repo, variant) not in rows or repo_lang[repo] != lang:
                    continue
                f_rows, l_rows = rows[(repo, variant)]
                lang_f += f_rows
                lang_l += l_rows
                f, l = summarize(f_rows), summarize(l_rows)
                lines.append(f"| {repo} | {len(f_rows)} | {f[0]:.1f} | {l[0]:.1f} | {f[1]:.1f} | {l[1]:.1f} | {f[2]:.1f} | {l[2]:.1f} | {f[3]:.1f} | {l[3]:.1f} |")
            if lang_f:
                f, l = summarize(lang_f), summarize(lang_l)
                lines.append(f"| *{lang}* | {len(lang_f)} | {f[0]:.1f} | {l[0]:.1f} | {f[1]:.1f} | {l[1]:.1f} | {f[2]:.1f} | {l[2]:.1f} | {f[3]:.1f} | {l[3]:.1f} |")
            all_f += lang_f
            all_l += lang_l
        f, l = summarize(all_f), summarize(all_l)
        lines.append(f"| **all** | {len(all_f)} | {f[0]:.1f} | {l[0]:.1f} | {f[1]:.1f} | {l[1]:.1f} | {f[2]:.1f} | {l[2]:.1f} | {f[3]:.1f} | {l[3]:.1f} |")
        lines.append("")
    table = "\n".join(lines)
    print(table)
    print("(tasks whose gold is among the candidates; metrics over those candidates)")
    if a.validate_only:
        return
    model = train(tasks)
    imp = sorted(zip(names, model.feature_importance("gain")), key=lambda x: -x[1])
    print("feature gain:", ", ".join(f"{n} {g:.0f}" for n, g in imp if g > 0))
    out = to_kenning(model, names, f"{len(tasks)} pseudo-tasks from {', '.join(repos)}")
    # The export must score as LightGBM does.
    for t in tasks[:50]:
        ref = model.predict(t["X"])
        mine = [score(out, x) for x in t["X"]]
        assert np.allclose(ref, mine, atol=1e-4), (ref[:3], mine[:3])
    with open(a.out, "w") as fh:
        json.dump(out, fh, separators=(",", ":"))
    print(f"wrote {a.out}: {len(out['trees'])} trees, {os.path.getsize(a.out)} bytes")
    if a.report:
        with open(a.report, "w") as fh:
            fh.write(table + "\n")


def score(m, x):
    total = 0.0
    for t in m["trees"]:
        i = 0
        while t[i][0] >= 0:
            f, th, l, r = t[i]
            i = l if np.float32(x[f]) <= np.float32(th) else r
        total += t[i][1]
    return total


if __name__ == "__main__":
    main()
