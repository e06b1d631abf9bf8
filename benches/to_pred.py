#!/usr/bin/env python3
"""Turns `ken search --files --json` (stdin) into one prediction line of the localization
eval kit: {"id", "files": [ranked paths], "functions": [ranked "path::Qual.name"]}."""
import json
import sys

task_id = sys.argv[1]
raw = sys.stdin.read()
try:
    result = json.loads(raw) if raw.strip() else {}
except json.JSONDecodeError:
    result = {}
files = [f["path"] for f in (result.get("files") or [])]
if result.get("mode") == "semantic":
    # Semantic hits are chunks: a file ranks by its best chunk.
    for h in result.get("chunks") or result.get("hits") or []:
        if h["path"] not in files:
            files.append(h["path"])
    files = files[:20]
# Functions follow their file's rank, then their own score.
file_rank = {p: i for i, p in enumerate(files)}
candidates = [
    h for h in result.get("hits") or []
    if h.get("kind") in ("function", "method") and h.get("local_name")
]
candidates.sort(key=lambda h: (file_rank.get(h["path"], len(files)), -h.get("score", 0.0)))
functions = []
for h in candidates:
    key = f'{h["path"]}::{h["local_name"]}'
    if key not in functions:
        functions.append(key)
print(json.dumps({"id": task_id, "files": files, "functions": functions}))
