#!/usr/bin/env python3
"""Fine-tunes Kenning's static embedding model for code search and writes it in the format
`ken` embeds (int8 rows with per-row f32 scales, `src/vector/static_embedder.rs`).

    train_static.py --pairs pairs.jsonl --base models/potion-base-8M-int8 --out OUT
                    [--holdout OWNER/NAME,...] [--epochs 3] [--batch 512] [--lr 0.003]

The model is what `ken` runs: a text's vector is the IDF-weighted sum of its tokens' rows,
normalized; identifiers are split at case changes before the BERT WordPiece tokenizer, as
`StaticEmbedder::token_ids` does. Training starts from potion-base-8M's rows and moves them
with a contrastive loss (InfoNCE over in-batch negatives, both directions, temperature 0.05)
on (description, code) pairs from `mine_pairs.py`: the description is the query side, the
code the document side written as `ken` writes a chunk (`path · container · signature`, then
the lines). `--pull` adds an L2 pull toward the starting rows (off by default: the gradient
of a row is tiny, so any useful weight must be far below 1e-6). Repositories named in `--holdout` are left out of training and give the validation
figure: MRR@10 of each held-out description against every held-out definition, before and
after. numpy, scipy and tokenizers only; two CPU cores are enough.
"""
import argparse
import json
import os
import random
import struct
import sys
import time

import numpy as np
import scipy.sparse as sp
from tokenizers import Tokenizer

MAX_TOKENS = 512


def split_case(text):
    """`registerHook` -> `register Hook`, `HTTPServer` -> `HTTP Server` (as the Rust side)."""
    out = []
    n = len(text)
    for i, c in enumerate(text):
        if i:
            p = text[i - 1]
            lower_upper = p.islower() and c.isupper()
            acronym_end = p.isupper() and c.isupper() and i + 1 < n and text[i + 1].islower()
            if lower_upper or acronym_end:
                out.append(" ")
        out.append(c)
    return "".join(out)


def read_safetensors(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8 : 8 + n])
    body = data[8 + n :]
    e, w = header["embeddings"], header["weights"]
    rows, dim = e["shape"]
    q = np.frombuffer(body[e["data_offsets"][0] : e["data_offsets"][1]], dtype=np.int8).reshape(rows, dim)
    scales = np.frombuffer(body[w["data_offsets"][0] : w["data_offsets"][1]], dtype="<f4")
    return q.astype(np.float32) * scales[:, None]


def write_safetensors(path, table):
    """Per-row symmetric int8 (scale = max|x| / 127), as models/potion-base-8M-int8/reproduce.py."""
    table = table.astype(np.float32)
    scales = (np.abs(table).max(axis=1) / 127.0).astype(np.float32)
    safe = np.where(scales > 0, scales, 1.0)[:, None]
    q = np.clip(np.rint(table / safe), -127, 127).astype(np.int8)
    emb, sc = q.tobytes(), scales.astype("<f4").tobytes()
    head = {
        "embeddings": {"dtype": "I8", "shape": list(table.shape), "data_offsets": [0, len(emb)]},
        "weights": {"dtype": "F32", "shape": [table.shape[0]], "data_offsets": [len(emb), len(emb) + len(sc)]},
    }
    text = json.dumps(head).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + emb + sc)
    return q.astype(np.float32) * scales[:, None]


def chunk_text(p):
    head = f"{p['path']} · {p['container']} · {p['signature']}" if p.get("container") else f"{p['path']} · {p['signature']}"
    return head + "\n" + p["code"]


class Encoder:
    def __init__(self, tokenizer_path, vocab):
        self.tok = Tokenizer.from_file(tokenizer_path)
        self.unk = self.tok.token_to_id("[UNK]")
        self.vocab = vocab

    def ids(self, texts):
        encs = self.tok.encode_batch([split_case(t) for t in texts], add_special_tokens=False)
        return [[i for i in e.ids if i != self.unk][:MAX_TOKENS] for e in encs]

    def matrix(self, id_lists, idf):
        """Rows of token weights (IDF times count): a text's vector is this row times the table."""
        indptr, indices, data = [0], [], []
        for ids in id_lists:
            counts = {}
            for i in ids:
                counts[i] = counts.get(i, 0) + 1
            for i, c in counts.items():
                indices.append(i)
                data.append(idf[i] * c)
            indptr.append(len(indices))
        return sp.csr_matrix((np.array(data, np.float32), indices, indptr), shape=(len(id_lists), self.vocab))


def normalize(v):
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.maximum(n, 1e-9), n


def mrr_at_10(table, Q, D):
    q, _ = normalize(Q @ table)
    d, _ = normalize(D @ table)
    total = 0.0
    for s in range(0, q.shape[0], 1024):
        sims = q[s : s + 1024] @ d.T
        gold = sims[np.arange(sims.shape[0]), np.arange(s, s + sims.shape[0])]
        rank = (sims > gold[:, None]).sum(axis=1)
        total += np.where(rank < 10, 1.0 / (rank + 1), 0.0).sum()
    return total / q.shape[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--base", required=True, help="folder with model.safetensors and tokenizer.json")
    ap.add_argument("--out", required=True)
    ap.add_argument("--holdout", default="")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--lr", type=float, default=0.003)
    ap.add_argument("--temperature", type=float, default=0.05)
    ap.add_argument("--pull", type=float, default=0.0, help="L2 weight toward the starting rows")
    ap.add_argument("--no-tests", action="store_true", help="leave out pairs from test files")
    a = ap.parse_args()
    t0 = time.time()
    base = read_safetensors(os.path.join(a.base, "model.safetensors"))
    enc = Encoder(os.path.join(a.base, "tokenizer.json"), base.shape[0])
    pairs = [json.loads(l) for l in open(a.pairs)]
    if a.no_tests:
        pairs = [p for p in pairs if not p.get("test")]
    held = set(r for r in a.holdout.split(",") if r)
    train = [p for p in pairs if p["repo"] not in held]
    valid = [p for p in pairs if p["repo"] in held]
    random.Random(7).shuffle(train)
    print(f"{len(train)} training pairs, {len(valid)} held out ({', '.join(sorted(held)) or 'none'})", file=sys.stderr)
    q_ids, d_ids = enc.ids([p["description"] for p in train]), enc.ids([chunk_text(p) for p in train])
    # IDF over the training documents (ken weighs by each repository's own at index time).
    df = np.zeros(base.shape[0], np.float64)
    for ids in d_ids:
        df[list(set(ids))] += 1
    idf = (np.log((1 + len(d_ids)) / (1 + df)) + 1).astype(np.float32)
    Q, D = enc.matrix(q_ids, idf), enc.matrix(d_ids, idf)
    if valid:
        VQ = enc.matrix(enc.ids([p["description"] for p in valid]), idf)
        VD = enc.matrix(enc.ids([chunk_text(p) for p in valid]), idf)
        print(f"held-out MRR@10 before: {mrr_at_10(base, VQ, VD):.4f}", file=sys.stderr)
    table = base.copy()
    m, v = np.zeros_like(table), np.zeros_like(table)
    b1, b2, step = 0.9, 0.999, 0
    n = Q.shape[0]
    steps = a.epochs * ((n + a.batch - 1) // a.batch)
    for epoch in range(a.epochs):
        order = np.random.default_rng(epoch).permutation(n)
        losses = []
        for s in range(0, n - a.batch + 1, a.batch):
            idx = order[s : s + a.batch]
            Aq, Ad = Q[idx], D[idx]
            vq, vd = Aq @ table, Ad @ table
            qn, qnorm = normalize(vq)
            dn, dnorm = normalize(vd)
            logits = (qn @ dn.T) / a.temperature
            eye = np.eye(len(idx), dtype=np.float32)
            p1 = np.exp(logits - logits.max(axis=1, keepdims=True))
            p1 /= p1.sum(axis=1, keepdims=True)
            p2 = np.exp(logits.T - logits.T.max(axis=1, keepdims=True))
            p2 /= p2.sum(axis=1, keepdims=True)
            losses.append(-(np.log(np.diag(p1) + 1e-9).mean() + np.log(np.diag(p2) + 1e-9).mean()) / 2)
            g = ((p1 - eye) + (p2 - eye).T) / (2 * len(idx) * a.temperature)
            dqn, ddn = g @ dn, g.T @ qn
            dvq = (dqn - qn * (qn * dqn).sum(axis=1, keepdims=True)) / np.maximum(qnorm, 1e-9)
            dvd = (ddn - dn * (dn * ddn).sum(axis=1, keepdims=True)) / np.maximum(dnorm, 1e-9)
            grad = np.asarray(Aq.T @ dvq + Ad.T @ dvd) + a.pull * (table - base)
            step += 1
            lr = a.lr * min(1.0, step / 50) * max(0.1, 1 - step / steps)
            m = b1 * m + (1 - b1) * grad
            v = b2 * v + (1 - b2) * grad * grad
            # The rows are large (norms near 95) and a text sums hundreds of them, so the gradient
            # is tiny: an epsilon far below it keeps Adam's step scale-free.
            table -= lr * (m / (1 - b1**step)) / (np.sqrt(v / (1 - b2**step)) + 1e-20)
        msg = f"epoch {epoch + 1}: loss {np.mean(losses):.4f}"
        if valid:
            msg += f", held-out MRR@10 {mrr_at_10(table, VQ, VD):.4f}"
        print(f"{msg} ({time.time() - t0:.0f} s)", file=sys.stderr)
    os.makedirs(a.out, exist_ok=True)
    quantized = write_safetensors(os.path.join(a.out, "model.safetensors"), table)
    if valid:
        print(f"held-out MRR@10 after int8: {mrr_at_10(quantized, VQ, VD):.4f}", file=sys.stderr)
    for name in ("tokenizer.json", "config.json"):
        with open(os.path.join(a.base, name), "rb") as f, open(os.path.join(a.out, name), "wb") as g:
            g.write(f.read())
    print(f"wrote {a.out} in {time.time() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
