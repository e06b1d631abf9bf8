#!/usr/bin/env python3
"""Mine weakly supervised ranking queries from one repository's git history (stdlib + git only).

    mine.py --mirror GITDIR --repo OWNER/NAME --lang LANG --out OUT.jsonl
            [--snapshots-out SNAPS.jsonl] [--seed S] [--scan-commits 4000]
            [--max-commit 150] [--max-docstring 100] [--max-symbol 100] [--max-heading 60]
            [--batch 25] [--batch-days 45]
    mine.py --licence GITDIR        # print the SPDX id guessed from the licence file at HEAD

GITDIR is a bare mirror (or a clone's .git). Nothing is checked out: blobs are read with
`git cat-file --batch`, so a repository is mined in seconds. Four kinds of query, one JSON
line each:

  commit     subject + body of a non-merge commit -> the existing source files it modified and
             the definitions its hunks touched. Answered at `snapshot`: the parent of the first
             commit of its batch (consecutive qualifying commits, at most --batch of them and
             --batch-days apart), so one index of that snapshot, with history cut there, serves
             the whole batch. Positives must exist at the snapshot.
  docstring  a doc comment / docstring -> its definition. `remove` gives the comment's lines
             (1-based, inclusive) to blank out of that file for that query only, so the answer
             cannot be read off the comment.
  symbol     a definition's name or qualified name (Container.name) -> the defining file(s).
  heading    a README / docs markdown heading (with its parent heading) -> the source files the
             section names: paths, and `code spans` naming a definition or a file stem.

Definitions and doc comments come from per-language regular expressions (DEFS/DOC below), not
from a parser: good enough to mine labels, and it keeps the miner dependency-free. Static kinds
(docstring, symbol, heading) are mined at one snapshot: the newest batch's.
Skipped commits: merges, > 20 files, only docs/tests/lockfiles/generated touched, bots, release /
version / formatting / typo / revert messages, < 4 words after trailers and PR numbers go.
"""
import argparse
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import time

# --- file classes ----------------------------------------------------------------------------
LANG_EXT = {
    "python": ("py", "pyi"), "rust": ("rs",), "javascript": ("js", "jsx", "mjs", "cjs"),
    "typescript": ("ts", "mts", "cts", "tsx"), "go": ("go",), "java": ("java",),
    "kotlin": ("kt", "kts"), "scala": ("scala", "sc"), "csharp": ("cs",), "php": ("php",),
    "ruby": ("rb", "rake"), "c": ("c", "h"),
    "cpp": ("cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h", "ipp", "tpp"),
    "swift": ("swift",), "elixir": ("ex", "exs"), "haskell": ("hs",), "lua": ("lua",),
    "zig": ("zig",), "bash": ("sh", "bash", "bats"),
}
EXT_LANG = {}
for _l, _es in LANG_EXT.items():
    for _e in _es:
        EXT_LANG.setdefault(_e, _l)

TEST = re.compile(r"(^|/)(tests?|testing|__tests__|__mocks__|specs?|testdata|test-data|fixtures?|"
                  r"benches|benchmarks?|examples?|samples?|e2e|integration[-_]tests?)/|"
                  r"(^|/)test_[^/]*$|_(test|spec)s?\.[a-z]+$|\.(test|spec)\.[a-z]+$|"
                  r"(^|/)conftest\.py$|Tests?\.(java|kt|cs|swift|scala)$|Spec\.(scala|kt)$|_SUITE\.", re.I)
DOC = re.compile(r"(^|/)(docs?|documentation|site|website|man)/|\.(md|rst|txt|adoc|html|css|svg|png|jpe?g|gif)$", re.I)
LOCK = re.compile(r"(^|/)([^/]*\.lock|package-lock\.json|pnpm-lock\.yaml|go\.sum|yarn\.lock|"
                  r"mix\.lock|Gemfile\.lock|composer\.lock|Cargo\.lock|\.github/.*|\.gitignore|"
                  r"CHANGELOG[^/]*|CHANGES[^/]*|HISTORY[^/]*|NEWS[^/]*|AUTHORS[^/]*|VERSION)$", re.I)
VENDOR = re.compile(r"(^|/)(vendor|third[_-]?party|node_modules|dist|build|deps|external|extern|"
                    r"generated|gen)/|\.min\.js$|\.pb\.go$|_pb2\.py$|\.g\.cs$|\.designer\.cs$", re.I)
BOT = re.compile(r"\[bot\]|dependabot|renovate|github-actions|greenkeeper|pre-commit-ci|snyk|"
                 r"allcontributors|imgbot|semantic-release|mergify|copilot", re.I)
SKIP_MSG = re.compile(r"^\s*(merge\b|bump\b|release\b|prepare\b|v?\d+\.\d+(\.\d+)?\b|version\b|"
                      r"update changelog|changelog|revert\b|(re)?format|run (black|prettier|rustfmt|gofmt)|"
                      r"apply (black|prettier)|lint\b|typos?\b|fix typos?|docs?[:(!]|chore|ci[:(!]|"
                      r"style[:(!]|test[:(!]|tests[:(!]|build\(deps|wip\b|initial commit)", re.I)
TRAILER = re.compile(r"^\s*(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|"
                     r"reported-by|change-id|cc|pr-url|reviewed-on|git-svn-id):", re.I)


def src_lang(path, repo_lang):
    ext = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    if ext == "h" and repo_lang in ("c", "cpp"):
        return repo_lang
    if ext in ("js", "jsx", "mjs", "cjs") and repo_lang == "typescript":
        return "javascript"
    return EXT_LANG.get(ext)


def is_source(path, repo_lang):
    return (src_lang(path, repo_lang) is not None and not TEST.search(path)
            and not VENDOR.search(path) and not DOC.search(path))


# --- git ---------------------------------------------------------------------------------------
def git(gd, *args, check=True):
    return subprocess.run(["git", "--git-dir", gd, *args], capture_output=True, text=True,
                          errors="replace", check=check).stdout


class Blobs:
    """`git cat-file --batch` kept open: read many blobs by `rev:path` or sha."""

    def __init__(self, gd):
        self.p = subprocess.Popen(["git", "--git-dir", gd, "cat-file", "--batch"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def read(self, spec, limit=1 << 20):
        self.p.stdin.write(spec.encode() + b"\n")
        self.p.stdin.flush()
        head = self.p.stdout.readline().split()
        if len(head) < 3 or head[1] != b"blob":
            if len(head) == 3:
                self.p.stdout.read(int(head[2]) + 1)
            return None
        data = self.p.stdout.read(int(head[2]) + 1)[:-1]
        if len(data) > limit or b"\0" in data[:8000]:
            return None
        return data.decode("utf-8", "replace")

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def tree(gd, rev):
    out = git(gd, "ls-tree", "-r", "-z", "--long", rev)
    files = {}
    for rec in out.split("\0"):
        if not rec:
            continue
        meta, path = rec.split("\t", 1)
        parts = meta.split()
        # "-" for submodules; a partial mirror (objects over a size limit left out) may print
        # anything else that is not a number for a blob it lacks: skipped too.
        if parts[1] == "blob" and parts[3].isdigit():
            files[path] = int(parts[3])
    return files


# --- definitions and doc comments by regex -------------------------------------------------------
I = r"[A-Za-z_][A-Za-z0-9_]*"
MODS = r"(?:(?:public|private|protected|internal|static|final|abstract|sealed|override|virtual|" \
       r"async|open|inline|suspend|data|export|default|declare|readonly|partial|extern|unsafe|" \
       r"pub(?:\([a-z]+\))?|const|fileprivate|mutating|lazy|implicit|case|operator|infix|tailrec)\s+)*"
CLASS_KW = {"class", "struct", "enum", "trait", "interface", "impl", "module", "defmodule", "object",
            "protocol", "extension", "record", "type", "data", "newtype", "union", "namespace", "mod"}
DEFS = {
    "python": [rf"^(?P<ind>\s*+)(?:async\s+)?(?P<kw>def|class)\s+(?P<name>{I})"],
    "rust": [rf"^(?P<ind>\s*+){MODS}(?P<kw>fn|struct|enum|trait|type|mod|union|macro_rules!)\s*(?P<name>{I})",
             rf"^(?P<ind>\s*+)(?P<kw>impl)(?:<[^>]*>)?\s+(?:{I}(?:<[^>]*>)?\s+for\s+)?(?P<name>{I})"],
    "go": [rf"^(?P<ind>)(?P<kw>func)\s+(?:\(\s*{I}?\s*\*?(?P<recv>{I})(?:\[[^\]]*\])?\s*\)\s*)?(?P<name>{I})\s*[\[(]",
           rf"^(?P<ind>\s*+)(?P<kw>type)\s+(?P<name>{I})\s+(?:struct|interface|func|{I})"],
    "javascript": [rf"^(?P<ind>\s*+)(?:export\s+)?(?:default\s+)?(?:async\s+)?(?P<kw>function\*?|class)\s+(?P<name>{I})",
                   rf"^(?P<ind>\s*+)(?:export\s+)?(?P<kw>const|let|var)\s+(?P<name>{I})\s*=\s*(?:async\s+)?(?:function|\([^)]*\)\s*=>|{I}\s*=>)",
                   rf"^(?P<ind>\s++)(?:static\s+)?(?:async\s+)?(?P<kw>)(?P<name>{I})\s*\([^)]*\)\s*\{{"],
    "java": [rf"^(?P<ind>\s*+){MODS}(?P<kw>class|interface|enum|record|@interface)\s+(?P<name>{I})",
             rf"^(?P<ind>\s*+){MODS}(?:<[^>]+>\s+)?(?P<kw>)[\w<>\[\],.? ]+\s+(?P<name>{I})\s*\([^;]*$"],
    "kotlin": [rf"^(?P<ind>\s*+){MODS}(?:enum\s+|sealed\s+|annotation\s+|value\s+|fun\s+)?(?P<kw>class|interface|object|typealias)\s+(?P<name>{I})",
               rf"^(?P<ind>\s*+){MODS}(?P<kw>fun)\s+(?:<[^>]+>\s*)?(?:[\w.<>?]+\.)?(?P<name>{I})\s*\("],
    "scala": [rf"^(?P<ind>\s*+){MODS}(?P<kw>class|trait|object|enum|def|type)\s+(?P<name>{I})"],
    "csharp": [rf"^(?P<ind>\s*+){MODS}(?P<kw>class|interface|struct|enum|record|namespace)\s+(?P<name>{I})",
               rf"^(?P<ind>\s*+){MODS}(?P<kw>)[\w<>\[\],.? ]+\s+(?P<name>{I})\s*(?:<[^>]+>)?\s*\([^;]*$"],
    "php": [rf"^(?P<ind>\s*+)(?:(?:abstract|final|readonly)\s+)*(?P<kw>class|interface|trait|enum)\s+(?P<name>{I})",
            rf"^(?P<ind>\s*+){MODS}(?P<kw>function)\s+&?(?P<name>{I})\s*\("],
    "ruby": [rf"^(?P<ind>\s*+)(?P<kw>def)\s+(?:self\.)?(?P<name>{I}[?!=]?)",
             rf"^(?P<ind>\s*+)(?P<kw>class|module)\s+(?:{I}::)*(?P<name>[A-Z]\w*)"],
    "c": [rf"^(?P<ind>)(?:static\s+|inline\s+|extern\s+|const\s+|unsigned\s+|struct\s+|enum\s+)*(?P<kw>){I}[\w\s\*]*?[\s\*]+(?P<name>{I})\s*\([^;]*$",
          rf"^(?P<ind>)(?:typedef\s+)?(?P<kw>struct|enum|union)\s+(?P<name>{I})\s*\{{?\s*$"],
    "cpp": [rf"^(?P<ind>\s*+)(?:template\s*<.*>\s*)?(?P<kw>class|struct|namespace|enum(?:\s+class)?|union)\s+(?:[A-Z_]+\s+)?(?P<name>{I})\s*(?:final\s*)?[:{{]?\s*$",
            rf"^(?P<ind>\s*+)(?:template\s*<.*>\s*)?(?:static\s+|inline\s+|virtual\s+|constexpr\s+|explicit\s+|extern\s+)*(?P<kw>)[\w:<>,\*&\s]*?[\s\*&]+(?:{I}::)*(?P<name>~?{I})\s*\([^;]*$"],
    "swift": [rf"^(?P<ind>\s*+)(?:@\w+\s+)*{MODS}(?:final\s+)?(?P<kw>class|struct|enum|protocol|extension|actor|func|typealias)\s+(?P<name>{I})"],
    "elixir": [rf"^(?P<ind>\s*+)(?P<kw>defmodule)\s+(?P<name>[A-Z][\w.]*)",
               rf"^(?P<ind>\s*+)(?P<kw>def|defp|defmacro|defmacrop|defguard|defdelegate)\s+(?P<name>{I}[?!]?)"],
    "haskell": [rf"^(?P<ind>)(?P<kw>data|newtype|type|class)\s+(?:\([^)]*\)\s*=>\s*)?(?P<name>[A-Z]\w*)",
                rf"^(?P<ind>)(?P<kw>)(?P<name>[a-z_][\w']*)\s*::"],
    "lua": [rf"^(?P<ind>\s*+)(?:local\s+)?(?P<kw>function)\s+(?:(?P<recv>{I})[.:])?(?:{I}[.:])*(?P<name>{I})\s*\(",
            rf"^(?P<ind>\s*+)(?:local\s+)?(?:(?P<recv>{I})\.)?(?P<name>{I})\s*=\s*(?P<kw>function)\b"],
    "zig": [rf"^(?P<ind>\s*+)(?:pub\s+)?(?:export\s+|extern\s+|inline\s+)*(?P<kw>fn)\s+(?P<name>{I})\s*\(",
            rf"^(?P<ind>\s*+)(?:pub\s+)?(?:const|var)\s+(?P<name>[A-Z]\w*)\s*=\s*(?:extern\s+|packed\s+)?(?P<kw>struct|enum|union|opaque)\b"],
    "bash": [rf"^(?P<ind>\s*+)(?:(?P<kw>function)\s+)?(?P<name>[A-Za-z_][\w:.-]*)\s*\(\)\s*\{{?",
             rf"^(?P<ind>\s*+)(?P<kw>function)\s+(?P<name>[A-Za-z_][\w:.-]*)\s*\{{"],
}
DEFS["typescript"] = DEFS["javascript"] + [
    rf"^(?P<ind>\s*+)(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?(?P<kw>interface|type|enum|namespace)\s+(?P<name>{I})",
    rf"^(?P<ind>\s++){MODS}(?P<kw>)(?P<name>{I})\s*(?:<[^>]+>)?\s*\([^)]*\)\s*(?::\s*[^{{=]+)?\{{"]
DEFS_RE = {k: [re.compile(p) for p in v] for k, v in DEFS.items()}
NOT_NAMES = {"if", "for", "while", "switch", "catch", "return", "else", "new", "function", "sizeof",
             "do", "try", "throw", "case", "await", "typeof", "delete", "elif", "when", "match",
             "foreach", "using", "lock", "fixed", "with", "super", "this", "assert", "defined"}
COMMON = {"main", "new", "init", "__init__", "get", "set", "run", "test", "setup", "setUp", "tearDown",
          "toString", "equals", "hashCode", "String", "fmt", "from", "into", "default", "clone",
          "drop", "call", "apply", "update", "render", "constructor", "describe", "it", "len",
          "__repr__", "__str__", "__eq__", "__hash__", "Error", "Value", "Type", "Options", "Config"}

LINE_DOC = {"rust": ("///", "//!"), "go": ("//",), "csharp": ("///",), "swift": ("///",),
            "zig": ("///",), "ruby": ("#",), "bash": ("#",), "lua": ("---", "--"),
            "haskell": ("-- |", "--"), "c": ("//",), "cpp": ("///", "//"), "php": (), "python": (),
            "kotlin": ("///",), "scala": (), "java": (), "javascript": (), "typescript": (), "elixir": ()}
BLOCK_DOC = {"javascript", "typescript", "java", "kotlin", "scala", "php", "c", "cpp", "swift",
             "csharp", "rust", "haskell", "go"}


def definitions(text, lang):
    """[(line0, indent, kw, name, container)]; container by indentation (or receiver)."""
    out, stack = [], []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if len(line) > 300 or not line.strip():
            continue
        for rx in DEFS_RE[lang]:
            m = rx.match(line)
            if not m:
                continue
            name = m.group("name")
            if name in NOT_NAMES or len(name) < 2:
                break
            kw = (m.group("kw") or "").strip()
            if lang in ("java", "csharp", "cpp", "c") and kw == "" and not re.search(r"[){]\s*(\{|throws.*|const.*|noexcept.*|override.*|=>.*)?$|\($|,$", line):
                break  # a call or declaration, not a definition
            ind = len(m.group("ind").expandtabs(4))
            while stack and stack[-1][0] >= ind:
                stack.pop()
            gd = m.groupdict()
            container = gd.get("recv") or (stack[-1][1] if stack else None)
            out.append((i, ind, kw, name, container))
            k0 = kw.split()[0] if kw else ""
            if k0 in CLASS_KW:
                stack.append((ind, name))
            break
    return out


def strip_doc(lines):
    t = []
    for l in lines:
        s = l.strip()
        s = re.sub(r"^(/\*\*+|/\*!|/\*|\*/|\*|///|//!|//|---|--\s*\||--|#+|@doc\s+\"\"\"|@moduledoc\s+\"\"\"|\"\"\"|'''|\{-\s*\||-\})", "", s)
        s = re.sub(r"(\*/|\"\"\"|'''|-\})\s*$", "", s).strip()
        t.append(s)
    # first paragraph, without tags and examples
    para = []
    for s in t:
        if not s and para:
            break
        if re.match(r"^(@\w+|:param|:return|:raises|Args:|Returns:|Parameters|Example|```|>>>|\\param|# Example)", s):
            break
        if s:
            para.append(s)
    return " ".join(para)


def doc_above(lines, i, lang):
    """The doc comment right above line i (or, for Python, right below): (start0, end0, text)."""
    if lang == "python":
        j = i + 1
        while j < len(lines) and lines[j].strip() == "":
            j += 1
        # skip a multi-line signature
        k = i
        while k < len(lines) and k < i + 15 and not re.search(r":\s*(#.*)?$", lines[k]):
            k += 1
        j = k + 1
        if j >= len(lines):
            return None
        s = lines[j].strip()
        m = re.match(r'^[rRbBuU]?("""|\'\'\')', s)
        if not m:
            return None
        q = m.group(1)
        end = j
        if s.count(q) < 2:
            end = j + 1
            while end < len(lines) and q not in lines[end]:
                end += 1
            if end >= len(lines):
                return None
        return j, end, strip_doc(lines[j:end + 1])
    if lang == "elixir":
        j = i - 1
        while j >= 0 and re.match(r"^\s*@(spec|impl|deprecated|since)\b", lines[j]):
            j -= 1
        if j < 0:
            return None
        end = j
        if re.match(r'^\s*@(doc|moduledoc)\s+"[^"]', lines[j]):
            return j, j, strip_doc([re.sub(r'^\s*@\w+\s+"|"\s*$', "", lines[j])])
        if lines[j].strip() != '"""':
            return None
        k = j - 1
        while k >= 0 and not re.match(r'^\s*@(doc|moduledoc)\s+(~[sS])?"""', lines[k]):
            if j - k > 200:
                return None
            k -= 1
        if k < 0:
            return None
        return k, end, strip_doc(lines[k + 1:end])
    j = i - 1
    skip = re.compile(r"^\s*(#\[|@[A-Za-z]|\[[A-Z]\w*.*\]\s*$|template\s*<|export\s*$)")
    while j >= 0 and skip.match(lines[j]) and lang not in ("ruby", "bash", "python"):
        j -= 1
    if j < 0:
        return None
    s = lines[j].strip()
    if lang in BLOCK_DOC and s.endswith("*/"):
        end = j
        k = j
        while k >= 0 and "/*" not in lines[k]:
            k -= 1
            if j - k > 200:
                return None
        if k < 0:
            return None
        if lang in ("java", "javascript", "typescript", "kotlin", "scala", "php", "swift") and "/**" not in lines[k]:
            return None
        return k, end, strip_doc(lines[k:end + 1])
    if lang == "haskell" and s.endswith("-}"):
        k = j
        while k >= 0 and "{-" not in lines[k]:
            k -= 1
        if k < 0 or "{- |" not in lines[k] and "{-|" not in lines[k]:
            return None
        return k, j, strip_doc(lines[k:j + 1])
    prefixes = LINE_DOC.get(lang, ())
    pre = next((p for p in prefixes if s.startswith(p)), None)
    if not pre:
        return None
    if pre == "//" and lang == "rust":
        return None
    k = j
    while k - 1 >= 0 and lines[k - 1].strip().startswith(pre.split()[0][:2]) and j - k < 200:
        k -= 1
    if lang == "haskell" and not lines[k].strip().startswith("-- |"):
        return None
    if lang in ("bash", "ruby") and lines[k].strip().startswith("#!"):
        k += 1
    if k > j:
        return None
    return k, j, strip_doc(lines[k:j + 1])


def good_text(t, min_words=4):
    w = re.findall(r"[A-Za-z]{2,}", t)
    if len(w) < min_words:
        return False
    if re.search(r"(copyright|licen[cs]e|spdx|auto-?generated|do not edit|eslint-disable|"
                 r"noinspection|rubocop:|shellcheck |@ts-|nolint|pylint:|TODO|FIXME)", t, re.I):
        return False
    return True


# --- commits ------------------------------------------------------------------------------------
def clean_message(msg):
    lines = [l for l in msg.splitlines() if not TRAILER.match(l)]
    text = "\n".join(lines).strip()
    text = re.sub(r"\s*\((?:#|GH-|gh-)\d+\)", "", text)
    text = re.sub(r"(?im)^\s*(fixes|closes|resolves|refs?|see)\s*:?\s*(#|https?://)\S+\s*$", "", text)
    text = re.sub(r"(?m)^\s*-{3,}\s*$", "", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text[:1500]


def candidate_commits(gd, head, scan, repo_lang):
    out = git(gd, "log", "--no-merges", "--no-renames", "--name-status", "-z", "-n", str(scan),
              "--format=%x1e%H%x1f%P%x1f%ct%x1f%an <%ae>%x1f%B%x1f", head)
    res = []
    for rec in out.split("\x1e")[1:]:
        parts = rec.split("\x1f", 5)
        if len(parts) < 6:
            continue
        sha, parents, ct, author, msg, rest = parts
        if len(parents.split()) != 1 or BOT.search(author):
            continue
        fields = [f.strip("\n") for f in rest.split("\0")]
        fields = [f for f in fields if f]
        changes = list(zip(fields[0::2], fields[1::2]))
        if not changes or len(changes) > 20:
            continue
        if all(TEST.search(p) or DOC.search(p) or LOCK.search(p) or VENDOR.search(p) for _, p in changes):
            continue
        pos = [p for s, p in changes if s == "M" and is_source(p, repo_lang)]
        if not pos or len(pos) > 10:
            continue
        text = clean_message(msg)
        subject = text.split("\n", 1)[0]
        if SKIP_MSG.match(subject) or len(re.findall(r"[A-Za-z]{2,}", text)) < 4:
            continue
        if BOT.search(msg[:200]) and "bot" in msg[:200].lower():
            continue
        res.append({"sha": sha, "parent": parents.split()[0], "time": int(ct), "text": text,
                    "files": pos, "n_changed": len(changes)})
    res.reverse()  # oldest first
    return res


def hunks_old(gd, parent, sha, path):
    out = git(gd, "diff", "-U0", "--no-color", parent, sha, "--", path, check=False)
    spans = []
    for m in re.finditer(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", out, re.M):
        a, n = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
        spans.append((a, a + max(n, 1) - 1))  # pure insertions: the line before
    return spans


def touched_defs(text, lang, spans):
    """Innermost definitions (by start line, up to the next def at <= indent) covering a hunk."""
    if lang is None or text is None:
        return []
    defs = definitions(text, lang)
    n = text.count("\n") + 1
    ranges = []
    for idx, (i, ind, kw, name, cont) in enumerate(defs):
        end = n
        for j2, ind2, *_ in defs[idx + 1:]:
            if ind2 <= ind:
                end = j2
                break
        ranges.append((i + 1, end, ind, name, cont))
    got = []
    for a, b in spans:
        best = None
        for r in ranges:
            if r[0] <= b and a <= r[1] and (best is None or r[2] >= best[2]):
                best = r
        if best and (best[3], best[4]) not in [(g[0], g[1]) for g in got]:
            got.append((best[3], best[4]))
    return got


def qual(name, cont):
    return f"{cont}.{name}" if cont else name


def batches(commits, size, days):
    out, cur = [], []
    for c in commits:
        if cur and (len(cur) >= size or c["time"] - cur[0]["time"] > days * 86400):
            out.append(cur)
            cur = []
        cur.append(c)
    if cur:
        out.append(cur)
    return out


# --- headings -----------------------------------------------------------------------------------
def md_sections(text):
    """[(level, title, parent_title, body)] of ATX headings outside code fences."""
    secs, fence, cur, stack = [], False, None, []
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        m = None if fence else re.match(r"^(#{1,4})\s+(.+?)\s*#*\s*$", line)
        if m:
            lvl, title = len(m.group(1)), re.sub(r"[*_`\[\]]|\(.*?\)|<[^>]+>", "", m.group(2)).strip()
            while stack and stack[-1][0] >= lvl:
                stack.pop()
            cur = [lvl, title, stack[-1][1] if stack else None, []]
            secs.append(cur)
            stack.append((lvl, title))
        elif cur is not None:
            cur[3].append(line)
    return [(l, t, p, "\n".join(b)) for l, t, p, b in secs]


# --- main -----------------------------------------------------------------------------------------
def qid(*parts):
    return hashlib.sha1("\x1f".join(map(str, parts)).encode()).hexdigest()[:16]


def mine(a):
    t0 = time.time()
    gd = a.mirror
    head = git(gd, "rev-parse", "HEAD").strip()
    rng = random.Random(f"{a.seed}:{a.repo}")
    lang = a.lang
    out = []
    blobs = Blobs(gd)
    stats = {"repo": a.repo, "language": lang, "head": head}

    # commits
    cands = candidate_commits(gd, head, a.scan_commits, lang)
    stats["commit_candidates"] = len(cands)
    if len(cands) > a.max_commit:  # keep whole batches: sample a contiguous-ish subset, newest first
        cands = cands[-a.max_commit * 2:]
    bs = batches(cands, a.batch, a.batch_days)
    snaps, tree_cache, n_commit = [], {}, 0
    for b in reversed(bs):
        if n_commit >= a.max_commit:
            break
        snap = b[0]["parent"]
        files = tree(gd, snap)
        snap_time = int(git(gd, "show", "-s", "--format=%ct", snap).strip() or 0)
        tree_cache[snap] = files
        kept = 0
        for c in b:
            if n_commit >= a.max_commit:
                break
            pos = []
            for p in c["files"]:
                if p not in files:
                    continue
                old = blobs.read(f"{c['parent']}:{p}")
                defs = touched_defs(old, src_lang(p, lang), hunks_old(gd, c["parent"], c["sha"], p))
                now = blobs.read(f"{snap}:{p}") if snap != c["parent"] else old
                names_now = {d[3] for d in definitions(now, src_lang(p, lang))} if now else set()
                pos.append({"path": p, "defs": [{"name": n, "qualname": qual(n, ct)} for n, ct in defs if n in names_now]})
            if not pos:
                continue
            out.append({"id": qid(a.repo, "commit", c["sha"]), "repo": a.repo, "snapshot": snap,
                        "kind": "commit", "language": lang,
                        "file_languages": sorted({src_lang(p["path"], lang) for p in pos}),
                        "query": c["text"], "positives": pos, "source_commit": c["sha"],
                        "source_time": c["time"], "snapshot_time": snap_time,
                        "commits_after_snapshot": b.index(c)})
            kept += 1
            n_commit += 1
        if kept:
            snaps.append({"repo": a.repo, "snapshot": snap, "time": snap_time, "commit_queries": kept,
                          "batch_first": b[0]["sha"], "batch_last": b[-1]["sha"]})
    stats["commit"] = n_commit

    # static kinds at the newest batch's snapshot (HEAD when there was no batch)
    static = snaps[0]["snapshot"] if snaps else head
    if not snaps:
        snaps.append({"repo": a.repo, "snapshot": head, "time": 0, "commit_queries": 0})
    snaps[0]["static"] = True
    files = tree_cache.get(static) or tree(gd, static)
    src = [p for p, sz in files.items() if is_source(p, lang) and sz < 400_000]
    rng.shuffle(src)
    src = src[:a.max_files]
    defs_by_file, docs, name_files = {}, [], {}
    for p in src:
        text = blobs.read(f"{static}:{p}")
        if text is None:
            continue
        fl = src_lang(p, lang)
        ds = definitions(text, fl)
        defs_by_file[p] = ds
        lines = text.split("\n")
        for (i, ind, kw, name, cont) in ds:
            name_files.setdefault(name, set()).add(p)
            if cont:
                name_files.setdefault(qual(name, cont), set()).add(p)
            d = doc_above(lines, i, fl)
            if d and good_text(d[2], 5):
                docs.append((p, i, name, cont, d, fl))
    # docstring
    rng.shuffle(docs)
    n = 0
    for p, i, name, cont, (s0, e0, txt), fl in docs:
        if n >= a.max_docstring:
            break
        q = txt[:400]
        out.append({"id": qid(a.repo, "docstring", p, i), "repo": a.repo, "snapshot": static,
                    "kind": "docstring", "language": lang, "file_languages": [fl], "query": q,
                    "positives": [{"path": p, "defs": [{"name": name, "qualname": qual(name, cont), "line": i + 1}]}],
                    "remove": {"path": p, "start_line": s0 + 1, "end_line": e0 + 1},
                    "query_names_answer": bool(re.search(rf"\b{re.escape(name)}\b", q))})
        n += 1
    stats["docstring"] = n
    # symbol
    pool = []
    for p, ds in defs_by_file.items():
        for (i, ind, kw, name, cont) in ds:
            if name in COMMON or len(name) < 4 or name.startswith("_") and not name.startswith("__"):
                continue
            pool.append((p, i, name, cont))
    rng.shuffle(pool)
    n, seen = 0, set()
    for p, i, name, cont in pool:
        if n >= a.max_symbol:
            break
        form = "qualified" if cont and rng.random() < 0.5 else "name"
        q = qual(name, cont) if form == "qualified" else name
        owners = sorted(name_files.get(q, {p}))
        if q in seen or len(owners) > 3:
            continue
        seen.add(q)
        out.append({"id": qid(a.repo, "symbol", q), "repo": a.repo, "snapshot": static, "kind": "symbol",
                    "language": lang, "file_languages": sorted({src_lang(o, lang) for o in owners}),
                    "query": q, "form": form,
                    "positives": [{"path": o, "defs": [{"name": name, "qualname": qual(name, cont)}]} for o in owners]})
        n += 1
    stats["symbol"] = n
    # heading
    stems = {}
    for p in src:
        base = p.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        stems.setdefault(base.lower(), set()).add(p)
        if "/" in p:
            stems.setdefault(p.rsplit("/", 2)[-2].lower(), set()).add(p)
    mds = [p for p in files if p.lower().endswith((".md", ".markdown")) and files[p] < 300_000
           and not re.search(r"(changelog|changes|history|news|contributing|code_of_conduct|licen[cs]e|security|"
                             r"authors|release|upgrad|migrat|\.github/)", p, re.I)
           and not VENDOR.search(p) and p.count("/") <= 3]
    mds.sort(key=lambda p: (p.count("/"), p))
    heads = []
    for md in mds[:60]:
        text = blobs.read(f"{static}:{md}")
        if not text:
            continue
        for lvl, title, parent, body in md_sections(text):
            if lvl == 1 or len(title) < 3 or re.match(r"(?i)^(table of contents|contents|license|licence|"
                                                     r"install(ation)?|contributing|credits|authors|"
                                                     r"changelog|support|sponsors?|badges?|links?|faq|"
                                                     r"acknowledge?ments|see also|related|donate|"
                                                     r"getting started|usage|examples?|requirements|overview|introduction)$", title):
                continue
            hit = {}
            for tok in re.findall(r"`([^`\n]{2,80})`|\]\(([^)\s]+)\)", body + "\n" + title):
                t = (tok[0] or tok[1]).strip()
                t_path = re.sub(r"^(\./|/|\.\./)+", "", t.split("#")[0])
                if t_path in files and is_source(t_path, lang):
                    hit[t_path] = "path"
                    continue
                m = re.match(r"^([A-Za-z_][\w.:]*?)(?:\(.*\))?$", t)
                if not m:
                    continue
                ident = re.split(r"::|\.", m.group(1))
                for cand in (m.group(1).replace("::", "."), ident[-1]):
                    owners = name_files.get(cand)
                    if owners and len(owners) <= 2 and len(cand) >= 4 and cand not in COMMON:
                        for o in owners:
                            hit.setdefault(o, "definition")
                        break
                else:
                    owners = stems.get(ident[-1].lower())
                    if owners and len(owners) <= 2 and len(ident[-1]) >= 4:
                        for o in owners:
                            hit.setdefault(o, "stem")
            for w in re.findall(r"[A-Za-z_][\w-]{3,}", title):
                owners = stems.get(w.lower())
                if owners and len(owners) <= 2:
                    for o in owners:
                        hit.setdefault(o, "title")
            if 1 <= len(hit) <= 5:
                q = f"{parent} > {title}" if parent and lvl > 2 else title
                heads.append({"id": qid(a.repo, "heading", md, q), "repo": a.repo, "snapshot": static,
                              "kind": "heading", "language": lang,
                              "file_languages": sorted({src_lang(h, lang) for h in hit}), "query": q,
                              "positives": [{"path": h, "via": v} for h, v in sorted(hit.items())],
                              "doc_path": md})
    rng.shuffle(heads)
    heads = heads[:a.max_heading]
    out.extend(heads)
    stats["heading"] = len(heads)
    blobs.close()
    stats["snapshots"] = len(snaps)
    stats["seconds"] = round(time.time() - t0, 2)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        for r in out:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    if a.snapshots_out:
        with open(a.snapshots_out, "w") as f:
            for s in snaps:
                f.write(json.dumps(s) + "\n")
    print(json.dumps(stats))


LICENCES = [  # (spdx, all of these must appear), checked in order
    ("AGPL-3.0", [r"GNU AFFERO GENERAL PUBLIC LICENSE"]),
    ("LGPL", [r"GNU LESSER GENERAL PUBLIC LICENSE"]),
    ("GPL", [r"GNU GENERAL PUBLIC LICENSE"]),
    ("BUSL-1.1", [r"Business Source License"]),
    ("MPL-2.0", [r"Mozilla Public License,? (Version|v\.?) ?2\.0"]),
    ("Apache-2.0", [r"Apache License", r"Version 2\.0"]),
    ("Apache-2.0", [r"licen[cs]ed under (the )?Apache(License)?,? ?(Version )?2\.0"]),
    ("BSD-3-Clause", [r"Redistribution and use in source and binary forms", r"(Neither the name|names of its contributors)"]),
    ("BSD-2-Clause", [r"Redistribution and use in source and binary forms"]),
    ("MIT", [r"Permission is hereby granted, free of charge"]),
    ("ISC", [r"Permission to use, copy, modify, and(/or)? distribute this software for any"]),
    ("Zlib", [r"This software is provided 'as-is'", r"altered source versions must be plainly marked"]),
    ("Unlicense", [r"This is free and unencumbered software released into the public domain"]),
    ("CC0-1.0", [r"CC0 1\.0 Universal"]),
]


def licence(gd):
    names = git(gd, "ls-tree", "--name-only", "HEAD").split("\n")
    found = []
    for n in names:
        if re.match(r"(?i)^(licen[cs]e|copying|mit-licen[cs]e|unlicense)", n):
            text = Blobs(gd).read(f"HEAD:{n}") or ""
            for spdx, pats in LICENCES:
                if all(re.search(p, text, re.I) for p in pats):
                    found.append(spdx)
                    break
            else:
                found.append("unknown:" + n)
    return " OR ".join(sorted(set(found))) or "none"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--licence", metavar="GITDIR")
    ap.add_argument("--mirror")
    ap.add_argument("--repo")
    ap.add_argument("--lang", choices=sorted(LANG_EXT))
    ap.add_argument("--out")
    ap.add_argument("--snapshots-out")
    ap.add_argument("--seed", default="kenning-ranking-1")
    ap.add_argument("--scan-commits", type=int, default=4000)
    ap.add_argument("--max-commit", type=int, default=150)
    ap.add_argument("--max-docstring", type=int, default=100)
    ap.add_argument("--max-symbol", type=int, default=100)
    ap.add_argument("--max-heading", type=int, default=60)
    ap.add_argument("--max-files", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=25)
    ap.add_argument("--batch-days", type=int, default=45)
    a = ap.parse_args()
    if a.licence:
        print(licence(a.licence))
        return
    if not (a.mirror and a.repo and a.lang and a.out):
        ap.error("--mirror, --repo, --lang and --out are needed")
    mine(a)


if __name__ == "__main__":
    main()
