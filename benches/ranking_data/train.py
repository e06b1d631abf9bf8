#!/usr/bin/env python3
"""Train the learned file ranker (LambdaMART, LightGBM) on the feature rows of features.py,
evaluate it leave-repositories-out by language and query kind, ablate each feature group, and
export it in Kenning's tree format.

    python3 -m venv V && V/bin/pip install lightgbm numpy
    V/bin/python benches/ranking_data/train.py --data /work/data/ranking \
        [--out models/file-ranker/model.json] [--report REPORT.md] [--folds 5] [--ablate]

Each query's candidates are the fused ranking's head (up to 50 files) with their feature
vectors; a candidate is relevant when it is among the query's positives (the files a commit
changed, the file defining a documented or named symbol, the files a doc section names).
Evaluation: repositories are split into `--folds` folds by a hash of their name; each fold's
queries are ranked by a model trained on the other folds' repositories. NDCG@10 (binary
gains; the ideal counts every positive, found or not), Recall@10 and MRR are reported for the
fused order and the learned order, per language and per query kind. `--ablate` retrains
without each feature group (its columns set to zero) on one split and reports the loss.
The exported model is trained on every repository.

Export format (`kenning-gbdt-1`, read by src/search/learned_ranker.rs): per tree a flat list
of nodes `[feature, threshold, left, right]`; a leaf has feature -1 and its value as the
threshold. `x <= threshold` goes left. Thresholds are rounded down to the nearest f32, so
Rust's f32 comparison takes the same branch as LightGBM's double one.
"""
import argparse
import glob
import hashlib
import json
import math
import os
import sys
import time
from collections import defaultdict

import lightgbm as lgb
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FEATURES_RS = os.path.join(HERE, "..", "..", "src", "search", "rank_features.rs")
CANDIDATES = 50
PARAMS = dict(
    objective="lambdarank",
    metric="ndcg",
    ndcg_eval_at=[10],
    learning_rate=0.08,
    num_leaves=31,
    min_data_in_leaf=50,
    feature_fraction=0.8,
    bagging_fraction=0.8,
    bagging_freq=1,
    lambdarank_truncation_level=20,
    verbose=-1,
    seed=7,
    deterministic=True,
    num_threads=2,
)
GROUPS = {
    "lexical": ["lexical", "lexical_rank", "lexical_defs"],
    "semantic": ["semantic", "semantic_rank", "semantic_chunks", "semantic_sum"],
    "mentions": ["mention", "mention_path", "best_symbol"],
    "exact_definition": ["exact_def"],
    "history": ["history", "history_rank", "has_history", "log_changes", "log_age_days", "log_span_days"],
    "cochange": ["cochange", "cochange_rank"],
    "graph": ["graph_rank", "centrality"],
    "path": ["path_prior", "is_test", "path_overlap", "name_match", "copy_prior", "path_role", "path_depth",
             "generated"],
    "module": ["folder_lexical", "folder_semantic", "module_entry"],
    "size": ["log_lines", "log_defs"],
    "query_kind": ["query_symbol", "query_natural", "query_issue", "query_trace", "query_words"],
    "fused": ["fused", "fused_rank"],
}


def feature_names():
    text = open(FEATURES_RS).read()
    body = text.split("FEATURE_NAMES: &[&str] = &[", 1)[1].split("];", 1)[0]
    return [l.strip().strip('",') for l in body.splitlines() if l.strip()]


def fold_of(repo, k):
    return int(hashlib.sha1(repo.encode()).hexdigest(), 16) % k


def load(data, width):
    tasks = []
    for path in sorted(glob.glob(os.path.join(data, "features", "*+*.jsonl"))):
        for line in open(path):
            t = json.loads(line)
            files = [f for f in t["files"][:CANDIDATES] if f.get("features")]
            pos = set(t["positives"])
            if not files or not pos:
                continue
            X = np.array([f["features"] for f in files], dtype=np.float32)
            if X.shape[1] != width:
                sys.exit(f"{path}: feature width {X.shape[1]} differs from FEATURE_NAMES ({width}): "
                         "re-run features.py with this ken")
            tasks.append({"id": t["id"], "repo": t["repo"], "language": t["language"], "kind": t["kind"],
                          "X": X, "y": np.array([1 if f["path"] in pos else 0 for f in files]),
                          "paths": [f["path"] for f in files], "gold": pos})
    return tasks


def train(tasks, rounds, drop=()):
    learn = [t for t in tasks if t["y"].any()]
    X = np.vstack([t["X"] for t in learn])
    if drop:
        X = X.copy()
        X[:, list(drop)] = 0.0
    y = np.concatenate([t["y"] for t in learn])
    ds = lgb.Dataset(X, y, group=[len(t["y"]) for t in learn], free_raw_data=False)
    return lgb.train(PARAMS, ds, num_boost_round=rounds)


def metrics(order, t):
    ranked = [t["paths"][i] for i in order]
    gold = t["gold"]
    dcg = sum(1 / math.log2(i + 2) for i, p in enumerate(ranked[:10]) if p in gold)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(gold), 10)))
    rec = len([g for g in gold if g in ranked[:10]]) / len(gold)
    first = next((i for i, p in enumerate(ranked) if p in gold), None)
    return dcg / idcg, rec, 0 if first is None else 1 / (first + 1), 1.0 if ranked[:1] and ranked[0] in gold else 0.0


def learned_order(model, t, drop=()):
    X = t["X"]
    if drop:
        X = X.copy()
        X[:, list(drop)] = 0.0
    s = model.predict(X)
    return sorted(range(len(s)), key=lambda i: (-s[i], i))


def mean(rows, i):
    return sum(r[i] for r in rows) / len(rows) if rows else 0.0


def table(rows, key, title):
    """rows: list of (task, fused metrics, learned metrics)."""
    groups = sorted({r[0][key] for r in rows})
    out = [f"\n{title}\n", f"| {key} | queries | fused NDCG@10 | learned NDCG@10 | fused R@10 | learned R@10 | fused MRR | learned MRR | learned Acc@1 |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for g in groups + ["all"]:
        sel = [r for r in rows if g == "all" or r[0][key] == g]
        f = [r[1] for r in sel]
        l = [r[2] for r in sel]
        out.append(f"| {g} | {len(sel)} | {mean(f, 0):.3f} | {mean(l, 0):.3f} | {mean(f, 1):.3f} | {mean(l, 1):.3f} | "
                   f"{mean(f, 2):.3f} | {mean(l, 2):.3f} | {mean(l, 3):.3f} |")
    return "\n".join(out)


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


def score(model, x):
    total = 0.0
    for t in model["trees"]:
        i = 0
        while True:
            f, v, l, r = t[i]
            if f < 0:
                total += v
                break
            i = l if np.float32(x[f]) <= np.float32(v) else r
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/work/data/ranking")
    ap.add_argument("--out", default=os.path.join(HERE, "..", "..", "models", "file-ranker", "model.json"))
    ap.add_argument("--report", default=None)
    ap.add_argument("--folds", type=int, default=5, help="0 or 1: no validation, only the exported model")
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--ablate", action="store_true")
    ap.add_argument("--ablate-only", action="store_true", help="the ablation without the per-fold validation")
    ap.add_argument("--ablate-each", action="store_true", help="with --ablate: one feature at a time, not groups")
    ap.add_argument("--validate-only", action="store_true")
    a = ap.parse_args()
    names = feature_names()
    tasks = load(a.data, len(names))
    if not tasks:
        sys.exit(f"no feature rows in {a.data}/features")
    repos = sorted({t["repo"] for t in tasks})
    langs = sorted({t["language"] for t in tasks})
    report = [f"# Learned file ranker: validation\n",
              f"{len(tasks)} queries from {len(repos)} repositories in {len(langs)} languages; "
              f"{sum(1 for t in tasks if t['y'].any())} with a positive among the candidates (trained on those; "
              f"every query is scored). Folds: {a.folds}, leave-repositories-out. Rounds {a.rounds}, "
              f"leaves {PARAMS['num_leaves']}, learning rate {PARAMS['learning_rate']}."]
    rows = []
    t0 = time.time()
    for k in range(a.folds if a.folds > 1 and not a.ablate_only else 0):
        test = [t for t in tasks if fold_of(t["repo"], a.folds) == k]
        model = train([t for t in tasks if fold_of(t["repo"], a.folds) != k], a.rounds)
        for t in test:
            rows.append((t, metrics(list(range(len(t["paths"]))), t), metrics(learned_order(model, t), t)))
        print(f"fold {k}: {len(test)} queries held out ({time.time() - t0:.0f}s)", file=sys.stderr)
    if rows:
        report.append(table(rows, "language", "## By language (held-out repositories)"))
        report.append(table(rows, "kind", "## By query kind (held-out repositories)"))
    if a.ablate or a.ablate_only:
        test = [t for t in tasks if fold_of(t["repo"], a.folds) == 0]
        train_set = [t for t in tasks if fold_of(t["repo"], a.folds) != 0]
        base = train(train_set, a.rounds)
        full = mean([metrics(learned_order(base, t), t) for t in test], 0)
        lines = ["\n## Ablation (fold 0 held out: each group's columns zeroed in training and test)\n",
                 f"All features: NDCG@10 {full:.3f} over {len(test)} queries.\n",
                 "| group left out | NDCG@10 | change |", "|---|---:|---:|"]
        groups = dict(GROUPS)
        if a.ablate_each:
            groups = {n: [n] for n in names}
        for g, cols in groups.items():
            drop = [names.index(c) for c in cols if c in names]
            m = train(train_set, a.rounds, drop)
            v = mean([metrics(learned_order(m, t, drop), t) for t in test], 0)
            lines.append(f"| {g} | {v:.3f} | {v - full:+.3f} |")
            print(f"ablation {g}: {v:.3f}", file=sys.stderr)
        report.append("\n".join(lines))
    text = "\n".join(report)
    print(text)
    if a.report:
        with open(a.report, "w") as f:
            f.write(text + "\n")
    if a.validate_only:
        return
    model = train(tasks, a.rounds)
    imp = sorted(zip(names, model.feature_importance("gain")), key=lambda x: -x[1])
    print("\nfeature gain:", ", ".join(f"{n} {g:.0f}" for n, g in imp if g > 0))
    out = to_kenning(model, names, f"{len(tasks)} mined queries from {len(repos)} repositories "
                                   f"({', '.join(langs)}); see models/file-ranker/PROVENANCE.md")
    for t in tasks[:50]:
        ref = model.predict(t["X"])
        mine = [score(out, x) for x in t["X"]]
        assert np.allclose(ref, mine, atol=1e-3), (ref[:3], mine[:3])
    with open(a.out, "w") as fh:
        json.dump(out, fh, separators=(",", ":"))
    print(f"wrote {a.out}: {len(out['trees'])} trees, {os.path.getsize(a.out)} bytes")


if __name__ == "__main__":
    main()
