#!/usr/bin/env python3
"""Mutation benchmark for `ken impact`: is the test selection safe?

For each project in projects.json: check it out (outside the repository), set up its test
runner, index it with `ken index build .`, run the whole suite once unmutated (the baseline),
then apply one small mutation at a time to a non-test function, run the WHOLE suite, record
the tests that fail, and revert. For every mutation some test catches, the mutation's diff
goes to `ken impact --patch FILE --json` and the selection is scored:

  safety      every failing test's file is among the selected tests' files (all selected,
              and only the "must run" ones: `must_run: true`, or `found_by == "graph"` when
              the field is absent)
  skip rate   share of the project's test files that the selection leaves out
  rank        1-based position of the first selected entry whose file has a failing test

One line per tried mutation goes to results/<project>.jsonl; a rerun skips the ids already
there. Standard library only.

    python3 benches/mutation/run.py --ken /work/bin/ken-46new --work /work/mutation-work \
        --projects benches/mutation/projects.json [--only NAME] [--max-mutations N] [--seconds S]
    python3 benches/mutation/run.py --summary
"""

import argparse
import fnmatch
import hashlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def sh(cmd, cwd, timeout=None, env=None):
    """Run a shell command; (rc, stdout, stderr, seconds). rc None on timeout."""
    t0 = time.time()
    p = subprocess.Popen(cmd, shell=True, cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, err = p.communicate()
        rc = None
    return rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), time.time() - t0


def git(args, cwd):
    return subprocess.run(["git"] + args, cwd=cwd, capture_output=True, text=True, check=True).stdout


# ---------------------------------------------------------------- project checkout and setup

class Project:
    def __init__(self, spec, work):
        self.spec = spec
        self.name = spec["name"]
        self.lang = spec["language"]
        self.work = work
        self.dir = os.path.join(work, self.name)
        self.venv = os.path.join(work, self.name + ".venv")
        self.out = os.path.join(work, self.name + ".out")

    def fmt(self, s):
        return s.format(venv=self.venv, out=self.out, dir=self.dir, work=self.work)

    def checkout(self):
        if os.path.isdir(os.path.join(self.dir, ".git")):
            return
        src = self.spec["source"]
        if "git" in src:
            subprocess.run(["git", "clone", "-q", src["git"], self.dir], check=True)
            if src.get("rev"):
                git(["checkout", "-q", src["rev"]], self.dir)
        elif "download" in src:
            # a registry download (pip download / npm pack / cargo): unpack and make it a repo
            tmp = self.dir + ".dl"
            shutil.rmtree(tmp, ignore_errors=True)
            os.makedirs(tmp)
            rc, out, err, _ = sh(self.fmt(src["download"]), tmp, timeout=600)
            if rc != 0:
                raise RuntimeError("download failed: " + err[-2000:])
            arch = [f for f in os.listdir(tmp)]
            if len(arch) != 1:
                raise RuntimeError("download gave %r" % arch)
            a = os.path.join(tmp, arch[0])
            if a.endswith(".crate"):
                subprocess.run(["tar", "xzf", a, "-C", tmp], check=True)
            else:
                shutil.unpack_archive(a, tmp)
            os.remove(a)
            (top,) = os.listdir(tmp)
            shutil.move(os.path.join(tmp, top), self.dir)
            shutil.rmtree(tmp)
            git(["init", "-q"], self.dir)
            git(["add", "-A", "-f", "."], self.dir)
            git(["-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q",
                 "-m", "source " + src["download"]], self.dir)
        else:
            raise RuntimeError("no source for " + self.name)

    def setup(self):
        marker = os.path.join(self.work, self.name + ".setup-ok")
        if os.path.exists(marker):
            return
        for cmd in self.spec.get("setup", []):
            log("[%s] setup: %s" % (self.name, self.fmt(cmd)))
            rc, out, err, _ = sh(self.fmt(cmd), self.dir, timeout=900)
            if rc != 0:
                raise RuntimeError("setup failed: %s\n%s\n%s" % (cmd, out[-1500:], err[-1500:]))
        # setup must leave tracked files alone
        git(["checkout", "--", "."], self.dir)
        open(marker, "w").write(time.ctime())

    def tracked(self):
        return [f for f in git(["ls-files"], self.dir).splitlines()]

    def is_test_file(self, path):
        return any(fnmatch.fnmatch(path, g) for g in self.spec["test_globs"])

    def test_files(self):
        return sorted(f for f in self.tracked() if self.is_test_file(f))

    def source_files(self):
        ex = self.spec.get("exclude_globs", [])
        out = []
        for f in self.tracked():
            if self.is_test_file(f) or any(fnmatch.fnmatch(f, g) for g in ex):
                continue
            if any(fnmatch.fnmatch(f, g) for g in self.spec["source_globs"]):
                out.append(f)
        return sorted(out)


# ---------------------------------------------------------------- running the suite

def run_suite(p, timeout):
    """Run the whole suite; (status, failing [(file, test)], seconds, tail).

    status: ok (parsed, maybe with failures), timeout, build_error (no test results, or the
    runner reports a compile/collection failure not tied to a test)."""
    if os.path.exists(p.out):
        if os.path.isdir(p.out):
            shutil.rmtree(p.out)
        else:
            os.remove(p.out)
    env = dict(os.environ)
    env.update({k: p.fmt(v) for k, v in p.spec.get("env", {}).items()})
    rc, out, err, secs = sh(p.fmt(p.spec["test"]), p.dir, timeout=timeout, env=env)
    if rc is None:
        return "timeout", [], secs, ""
    parser = PARSERS[p.spec["results"]]
    try:
        status, failing = parser(p, out, err, rc)
    except Exception as e:  # unreadable results: treat as a broken build
        return "build_error", [], secs, "parse: %s\n%s" % (e, (out + err)[-1500:])
    return status, sorted(set(failing)), secs, (out + err)[-1500:]


def parse_junit(p, out, err, rc):
    if not os.path.exists(p.out):
        return "build_error", []
    root = ET.parse(p.out).getroot()
    failing, n = [], 0
    for tc in root.iter("testcase"):
        n += 1
        bad = any(ch.tag in ("failure", "error") for ch in tc)
        if not bad:
            continue
        f = tc.get("file")
        cls = tc.get("classname") or ""
        if not f:
            # collection error: classname is the module path (tests.test_x)
            mod = cls.replace(".", "/")
            f = mod + ".py" if os.path.exists(os.path.join(p.dir, mod + ".py")) else mod
        failing.append((os.path.normpath(f), cls + "::" + (tc.get("name") or "")))
    if n == 0:
        return "build_error", []
    return "ok", failing


_go_dirs = {}


def go_pkg_dirs(p):
    if p.name not in _go_dirs:
        rc, out, err, _ = sh("go list -f '{{.ImportPath}} {{.Dir}}' ./...", p.dir, timeout=300)
        m = {}
        for line in out.splitlines():
            ip, d = line.split(" ", 1)
            m[ip] = os.path.relpath(d, p.dir)
        _go_dirs[p.name] = m
    return _go_dirs[p.name]


def go_test_file(p, pkg, test):
    d = go_pkg_dirs(p).get(pkg)
    if d is None:
        return pkg
    top = test.split("/")[0]
    pat = re.compile(r"^func\s+(\([^)]*\)\s*)?" + re.escape(top) + r"\s*\(", re.M)
    for f in sorted(os.listdir(os.path.join(p.dir, d))):
        if f.endswith("_test.go"):
            if pat.search(open(os.path.join(p.dir, d, f), errors="replace").read()):
                return os.path.normpath(os.path.join(d, f))
    return os.path.normpath(os.path.join(d, "?" + top))


def parse_go_json(p, out, err, rc):
    failing, pkg_fail, pkg_test_fail, n = [], set(), set(), 0
    for line in out.splitlines():
        if not line.startswith("{"):
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        a, pkg, test = ev.get("Action"), ev.get("Package"), ev.get("Test")
        if a in ("pass", "fail", "skip") and test:
            n += 1
        if a == "fail":
            if test:
                pkg_test_fail.add(pkg)
                if "/" not in test:
                    failing.append((go_test_file(p, pkg, test), pkg + "." + test))
            else:
                pkg_fail.add(pkg)
    if "build failed" in out or "[setup failed]" in out:
        # a compile error or vet failure: the mutant is invalid, not caught by a test
        return "build_error", failing
    if rc != 0 and (not failing or pkg_fail - pkg_test_fail):
        # a test binary that died outside any test (a panic at init): no test to attribute
        return "crash", failing
    if n == 0:
        return "build_error", []
    return "ok", failing


def parse_jest(p, out, err, rc):
    if not os.path.exists(p.out):
        return "build_error", []
    d = json.load(open(p.out))
    failing = []
    for tr in d.get("testResults", []):
        f = os.path.relpath(tr["name"], p.dir)
        bad = [a for a in tr.get("assertionResults", []) if a.get("status") == "failed"]
        for a in bad:
            failing.append((f, a.get("fullName") or a.get("title")))
        if not bad and tr.get("status") == "failed":
            failing.append((f, "<suite>"))
    if d.get("numTotalTests", 0) == 0:
        return "build_error", []
    return "ok", failing


def parse_mocha(p, out, err, rc):
    text = open(p.out).read() if os.path.exists(p.out) else out
    i = text.find("{")
    if i < 0:
        return "build_error", []
    d = json.loads(text[i:])
    failing = []
    for t in d.get("failures", []):
        f = t.get("file") or "?"
        failing.append((os.path.relpath(f, p.dir) if os.path.isabs(f) else f, t.get("fullTitle")))
    if d.get("stats", {}).get("tests", 0) == 0:
        return "build_error", []
    return "ok", failing


def parse_node_tap(p, out, err, rc):
    """`node --test --test-reporter=tap`: a failing test's YAML block has its location."""
    lines = out.splitlines()
    failing, n = [], None
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)not ok \d+ - (.*)$", line)
        if m:
            loc = None
            for k in range(i + 1, min(i + 40, len(lines))):
                if re.match(r"^\s*(not )?ok \d+ ", lines[k]) or lines[k].strip() == "...":
                    break
                lm = re.match(r"^\s*location: '(.*):\d+:\d+'", lines[k])
                if lm:
                    loc = lm.group(1)
                    break
            if loc is None and m.group(2).strip().endswith(".js"):
                loc = m.group(2).strip()
            if loc:
                f = os.path.relpath(loc, p.dir) if os.path.isabs(loc) else loc
                failing.append((os.path.normpath(f), m.group(2).strip()))
        t = re.match(r"^# tests (\d+)", line)
        if t:
            n = int(t.group(1))
    if not n:
        return "build_error", []
    return "ok", failing


def parse_cargo(p, out, err, rc):
    """`cargo test` lines; the file of a failing test: tests/<bin>.rs for integration
    binaries, the module's file under src/ for unit tests."""
    text = out + "\n" + err
    if "error[E" in text or "could not compile" in text:
        return "build_error", []
    failing, n, current = [], 0, None
    for line in text.splitlines():
        m = re.match(r"\s*Running (?:unittests )?(\S+)", line)
        if m:
            current = m.group(1)
            continue
        m = re.match(r"test (\S+) \.\.\. (ok|FAILED|ignored)", line)
        if m:
            n += 1
            if m.group(2) == "FAILED":
                failing.append((cargo_test_file(p, current, m.group(1)), m.group(1)))
    if n == 0:
        return "build_error", []
    return "ok", failing


def cargo_test_file(p, binsrc, name):
    if binsrc and binsrc.startswith("tests/"):
        return binsrc
    base = os.path.dirname(binsrc) if binsrc and binsrc.endswith(".rs") else "src"
    parts = name.split("::")[:-1]
    while parts and parts[-1] in ("tests", "test"):
        parts.pop()
    for k in range(len(parts), 0, -1):
        for cand in (os.path.join(base, *parts[:k]) + ".rs", os.path.join(base, *parts[:k], "mod.rs")):
            if os.path.exists(os.path.join(p.dir, cand)):
                return cand
    return binsrc or "src/lib.rs"


PARSERS = {"junit": parse_junit, "go-json": parse_go_json, "jest": parse_jest,
           "mocha": parse_mocha, "cargo": parse_cargo,
           "node-tap": parse_node_tap}


# ---------------------------------------------------------------- mutations

CMP_PAIRS = [("===", "!=="), ("!==", "==="), ("==", "!="), ("!=", "=="), ("<=", ">"),
             (">=", "<"), ("<", ">="), (">", "<=")]
CMP_RE = re.compile(r"(?<=\s)(===|!==|==|!=|<=|>=|<|>)(?=\s)")
NUM_RE = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
GO_FUNC = re.compile(r"^func\s+(\([^)]*\)\s*)?(\w+)\s*(\[[^\]]*\])?\(((?:[^()]|\([^()]*\))*)\)\s*(.*?)\s*\{\s*$")
PY_DEF = re.compile(r"^(\s*)(async\s+)?def\s+(\w+)\s*\(")
JS_FUNC = re.compile(r"^\s*(export\s+)?(default\s+)?(async\s+)?function\s*\*?\s*(\w+)\s*\(.*\)\s*\{\s*$"
                     r"|^\s*(static\s+)?(async\s+)?(get\s+|set\s+)?(\w+)\s*\([^;]*\)\s*\{\s*$"
                     r"|^\s*(const|let|var)?\s*([\w.]+)\s*=\s*(async\s+)?function\s*\w*\s*\(.*\)\s*\{\s*$"
                     r"|^\s*(const|let|var)?\s*([\w.]+)\s*=\s*(async\s+)?\(?[\w\s,{}=]*\)?\s*=>\s*\{\s*$")
RS_FUNC = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+(\w+).*\{\s*$")
JS_KEYWORDS = {"if", "for", "while", "switch", "catch", "function", "return", "with", "constructor"}
CALL_STMT = re.compile(r"^\s*(await\s+)?[\w.$\[\]'\"]+(\.[\w$]+)*\s*\((.*)\)\s*;?\s*$")


def in_string(line, pos):
    """Crude: is pos inside a quoted string or after a line comment?"""
    q = None
    i = 0
    while i < pos:
        c = line[i]
        if q:
            if c == "\\":
                i += 1
            elif c == q:
                q = None
        elif c in "\"'`":
            q = c
        elif c == "#" or line.startswith("//", i):
            return True
        i += 1
    return q is not None


def balanced(s):
    return s.count("(") == s.count(")") and s.count("[") == s.count("]") and s.count("{") == s.count("}")


def functions(lang, lines):
    """(name, header line index, first body index, end index exclusive, extra) per function."""
    out = []
    if lang == "python":
        i = 0
        while i < len(lines):
            m = PY_DEF.match(lines[i])
            if not m:
                i += 1
                continue
            ind = len(m.group(1))
            j, acc = i, ""
            while j < len(lines):
                acc += lines[j].split("#")[0]
                if acc.count("(") == acc.count(")") and acc.count("[") == acc.count("]"):
                    break
                j += 1
            if j >= len(lines) or not lines[j].split("#")[0].rstrip().endswith(":"):
                i += 1
                continue
            b = j + 1
            k = b
            while k < len(lines) and (not lines[k].strip() or len(lines[k]) - len(lines[k].lstrip()) > ind):
                k += 1
            out.append((m.group(3), i, b, k, None))
            i = b
        return out
    if lang in ("go", "js", "rust"):
        # Rust unit tests (`#[cfg(test)] mod tests { .. }`, `#[test] fn ..`) are tests, not code
        # under test.
        in_tests = set()
        if lang == "rust":
            for i, l in enumerate(lines):
                if re.match(r"^\s*(pub\s+)?mod\s+tests?\s*\{", l) or (
                        re.match(r"^\s*mod\s+\w+\s*\{", l) and i > 0 and "cfg(test)" in lines[i - 1]):
                    depth = 0
                    for k in range(i, len(lines)):
                        depth += lines[k].count("{") - lines[k].count("}")
                        in_tests.add(k)
                        if depth <= 0 and k > i:
                            break
        for i, l in enumerate(lines):
            if i in in_tests or (lang == "rust" and i > 0 and "#[test]" in lines[i - 1]):
                continue
            if lang == "go":
                m = GO_FUNC.match(l)
                if not m:
                    continue
                name, extra = m.group(2), m.group(5)
            elif lang == "rust":
                m = RS_FUNC.match(l)
                if not m or l.strip().startswith("//"):
                    continue
                name, extra = m.group(6), l
            else:
                m = JS_FUNC.match(l)
                if not m:
                    continue
                name = m.group(4) or m.group(8) or m.group(10) or m.group(14)
                if not name or name in JS_KEYWORDS:
                    continue
                extra = None
            ind = len(l) - len(l.lstrip())
            depth = 0
            end = None
            for k in range(i, len(lines)):
                s = lines[k]
                # strip strings/comments crudely before counting braces
                s2 = re.sub(r"(\"(\\.|[^\"\\])*\"|'(\\.|[^'\\])*'|`[^`]*`|//.*$)", "", s)
                depth += s2.count("{") - s2.count("}")
                if depth <= 0 and k > i:
                    end = k
                    break
            if end is None or end - i < 2:
                continue
            out.append((name, i, i + 1, end, extra))
        return out
    return out


GO_ZERO = {"error": "nil", "bool": "false", "string": '""', "any": "nil", "interface{}": "nil"}


def go_zero(res):
    res = res.strip()
    if res == "":
        return ""
    if res.startswith("(") and res.endswith(")"):
        parts = [x.strip().split(" ")[-1] for x in res[1:-1].split(",")]
        if any(" " in x.strip() for x in res[1:-1].split(",")):
            return None  # named results: a bare return is fine but keep it simple
    else:
        parts = [res]
    zs = []
    for t in parts:
        if t in GO_ZERO:
            zs.append(GO_ZERO[t])
        elif re.match(r"^u?int\d*$|^float\d+$|^byte$|^rune$|^uintptr$", t):
            zs.append("0")
        elif t.startswith(("*", "[]", "map[", "chan ", "func(")):
            zs.append("nil")
        else:
            return None
    return ", ".join(zs)


def mutations_for_file(p, path):
    lines = open(os.path.join(p.dir, path), errors="replace").read().split("\n")
    lang = p.lang
    muts = []
    for name, hdr, body, end, extra in functions(lang, lines):
        ind_body = None
        for k in range(body, end):
            if lines[k].strip():
                ind_body = lines[k][: len(lines[k]) - len(lines[k].lstrip())]
                break
        if ind_body is None:
            continue
        # return early
        ret = None
        at = body
        if lang == "python":
            if any(re.match(r"\s*(yield|return)\b", lines[k]) for k in range(body, end)) or True:
                ret = "return None"
            # after a docstring
            s = lines[body].strip()
            if s.startswith(('"""', "'''", 'r"""', "r'''")):
                q = s.lstrip("r")[:3]
                k = body
                if not (len(s.lstrip("r")) > 3 and s.endswith(q)):
                    k += 1
                    while k < end and q not in lines[k]:
                        k += 1
                at = k + 1
        elif lang == "go":
            z = go_zero(extra or "")
            if z is not None:
                ret = ("return " + z).rstrip()
        elif lang == "js":
            ret = "return;"
        elif lang == "rust":
            if "->" not in (extra or ""):
                ret = "return;"
        if ret and at < end and lines[at].strip():
            muts.append({"op": "return_early", "line": at, "function": name,
                         "new": ind_body + ret, "insert": True})
        for k in range(body, end):
            l = lines[k]
            s = l.strip()
            if not s or s.startswith(("#", "//", "*", "/*")) or s.startswith(('"""', "'''")):
                continue
            if lang == "go" and s.startswith(("case ", "import ")):
                pass
            # comparison flip
            for m in CMP_RE.finditer(l):
                if in_string(l, m.start()):
                    continue
                if lang == "rust" and "<" in m.group(1) or lang == "rust" and ">" in m.group(1) and "->" in l:
                    continue
                op = m.group(1)
                rep = dict(CMP_PAIRS)[op]
                if lang != "js" and op in ("===", "!=="):
                    continue
                new = l[: m.start()] + rep + l[m.end():]
                muts.append({"op": "flip_comparison", "line": k, "function": name, "new": new,
                             "col": m.start(), "detail": op + " -> " + rep})
            # numeric constant
            for m in NUM_RE.finditer(l):
                if in_string(l, m.start()):
                    continue
                pre = l[: m.start()]
                if lang == "python" and re.search(r"\bdef\b", pre):
                    continue
                n = m.group(1)
                if len(n) > 1 and n.startswith("0"):
                    continue
                new = pre + str(int(n) + 1) + l[m.end():]
                muts.append({"op": "bump_constant", "line": k, "function": name, "new": new,
                             "col": m.start(), "detail": n + " -> " + str(int(n) + 1)})
            # drop a call statement (single line, balanced)
            m = CALL_STMT.match(l)
            words = s.split("(")[0].split(".")[0].split()
            first = words[-1] if words else ""
            if m and balanced(s) and first not in ("return", "if", "for", "while", "elif", "else",
                                                    "print", "super", "defer", "go", "panic",
                                                    "assert", "raise", "yield", "del", "switch",
                                                    "func", "function", "def", "await"):
                if lang == "python":
                    if s.endswith((":", ",", "\\")):
                        continue
                    new = l[: len(l) - len(l.lstrip())] + "pass"
                elif lang == "js":
                    if not s.endswith((";", ")")):
                        continue
                    new = l[: len(l) - len(l.lstrip())] + ";"
                elif lang == "rust":
                    if not s.endswith(";"):
                        continue
                    new = l[: len(l) - len(l.lstrip())] + ";"
                else:
                    new = l[: len(l) - len(l.lstrip())] + "// dropped"
                muts.append({"op": "drop_call", "line": k, "function": name, "new": new})
    for mu in muts:
        mu["file"] = path
        key = "%s:%d:%s:%s:%s" % (path, mu["line"], mu["op"], mu.get("col", ""), mu["new"])
        mu["id"] = hashlib.sha1(key.encode()).hexdigest()[:12]
    return muts


def sample(p, seed, n):
    per_file = {}
    for f in p.source_files():
        ms = mutations_for_file(p, f)
        if ms:
            per_file[f] = ms
    rng = random.Random(seed)
    files = sorted(per_file)
    for f in files:
        rng.shuffle(per_file[f])
    order = []
    while len(order) < n and any(per_file.values()):
        rng.shuffle(files)
        for f in files:
            if per_file[f] and len(order) < n:
                order.append(per_file[f].pop())
    return order, sum(len(v) for v in per_file.values()) + len(order)


def apply(p, mu):
    path = os.path.join(p.dir, mu["file"])
    text = open(path, errors="replace").read()
    lines = text.split("\n")
    if mu.get("insert"):
        lines.insert(mu["line"], mu["new"])
    else:
        lines[mu["line"]] = mu["new"]
    open(path, "w").write("\n".join(lines))


# ---------------------------------------------------------------- scoring

def must_run(t):
    if "must_run" in t:
        return bool(t["must_run"])
    return t.get("found_by") == "graph"


def score(ken, p, diff_path, failing, test_files):
    rc, out, err, secs = sh("%s -q impact --patch %s --json --repo ." % (ken, diff_path), p.dir, timeout=120)
    if rc != 0:
        return {"error": (err or out)[-500:]}
    d = json.loads(out)
    tests = d.get("impact", d).get("tests", [])
    def files_of(entries):
        s = set()
        for t in entries:
            for k in ("path", "driver"):
                if t.get(k):
                    s.add(os.path.normpath(t[k]))
        return s
    sel_all = files_of(tests)
    sel_must = files_of([t for t in tests if must_run(t)])
    fail_files = sorted({f for f, _ in failing})
    rank = None
    for i, t in enumerate(tests):
        if files_of([t]) & set(fail_files):
            rank = i + 1
            break
    tf = set(test_files)
    return {
        "selected_entries": len(tests),
        "selected_must_run_entries": sum(1 for t in tests if must_run(t)),
        "selected_test_files": len(sel_all & tf),
        "selected_must_run_test_files": len(sel_must & tf),
        "selected_other_paths": sorted(sel_all - tf)[:20],
        "test_files": len(tf),
        "failing_files": fail_files,
        "missed_all": [f for f in fail_files if f not in sel_all],
        "missed_must_run": [f for f in fail_files if f not in sel_must],
        "safe_all": all(f in sel_all for f in fail_files),
        "safe_must_run": all(f in sel_must for f in fail_files),
        "skip_rate": 1 - len(sel_all & tf) / len(tf) if tf else None,
        "skip_rate_must_run": 1 - len(sel_must & tf) / len(tf) if tf else None,
        "first_failing_rank": rank,
        "ken_seconds": round(secs, 3),
        "top": [{k: t.get(k) for k in ("path", "name", "found_by", "score", "must_run", "driver") if k in t}
                for t in tests[:5]],
    }


# ---------------------------------------------------------------- driver

def run_project(args, spec):
    p = Project(spec, args.work)
    os.makedirs(RESULTS, exist_ok=True)
    res_path = os.path.join(RESULTS, p.name + ".jsonl")
    base_path = os.path.join(RESULTS, p.name + ".baseline.json")
    t_start = time.time()
    p.checkout()
    git(["checkout", "--", "."], p.dir)  # a crashed run may have left a mutation behind
    p.setup()
    head = git(["rev-parse", "HEAD"], p.dir).strip()
    if not os.path.isdir(os.path.join(p.dir, ".kenning")):
        rc, out, err, secs = sh("%s -q index build ." % args.ken, p.dir, timeout=600)
        if rc != 0:
            raise RuntimeError("ken index build failed: " + err[-1000:])
        if git(["status", "--porcelain", "--untracked-files=no"], p.dir).strip():
            raise RuntimeError("indexing changed tracked files")
    test_files = p.test_files()
    base = json.load(open(base_path)) if os.path.exists(base_path) else None
    if not base or base.get("commit") != head:
        log("[%s] baseline run" % p.name)
        status, failing, secs, tail = run_suite(p, timeout=spec.get("timeout", 300))
        if status != "ok":
            raise RuntimeError("baseline suite did not run: %s\n%s" % (status, tail))
        base = {"project": p.name, "commit": head, "seconds": round(secs, 2),
                "failing": failing, "test_files": len(test_files), "source": spec["source"]}
        json.dump(base, open(base_path, "w"), indent=1)
        log("[%s] baseline %.1fs, %d failing already, %d test files" % (p.name, secs, len(failing), len(test_files)))
    base_fail = {tuple(x) for x in base["failing"]}
    timeout = max(30, 5 * base["seconds"] + 20)
    done = set()
    if os.path.exists(res_path):
        for line in open(res_path):
            try:
                done.add(json.loads(line)["id"])
            except ValueError:
                pass
    order, total = sample(p, args.seed, args.max_mutations)
    log("[%s] %d candidate mutations, %d sampled, %d done" % (p.name, total, len(order), len(done & {m["id"] for m in order})))
    diff_dir = os.path.join(args.work, p.name + ".diffs")
    os.makedirs(diff_dir, exist_ok=True)
    for mu in order:
        if mu["id"] in done:
            continue
        if time.time() - t_start > args.seconds:
            log("[%s] time budget spent" % p.name)
            break
        apply(p, mu)
        diff = git(["diff"], p.dir)
        if not diff.strip():
            git(["checkout", "--", "."], p.dir)
            continue
        try:
            status, failing, secs, tail = run_suite(p, timeout)
        finally:
            git(["checkout", "--", "."], p.dir)
        failing = [tuple(x) for x in failing if tuple(x) not in base_fail]
        rec = {"id": mu["id"], "project": p.name, "commit": head, "file": mu["file"],
               "line": mu["line"] + 1, "function": mu["function"], "operator": mu["op"],
               "detail": mu.get("detail"), "status": status, "suite_seconds": round(secs, 2),
               "caught": status == "ok" and bool(failing),
               "failing_tests": [list(x) for x in failing][:200], "diff": diff}
        if status not in ("ok", "timeout"):
            rec["tail"] = tail[-800:]
        if rec["caught"]:
            dp = os.path.join(diff_dir, mu["id"] + ".diff")
            open(dp, "w").write(diff)
            rec["selection"] = score(args.ken, p, dp, failing, test_files)
        s = rec.get("selection", {})
        log("[%s] %s %s:%d %s %s -> %s%s" % (p.name, mu["id"], mu["file"], mu["line"] + 1, mu["op"],
                                            mu["function"], status, (" caught %d files, safe=%s rank=%s skip=%.2f" % (
                                                len(s.get("failing_files", [])), s.get("safe_all"), s.get("first_failing_rank"),
                                                s.get("skip_rate") or 0)) if rec["caught"] else ""))
        with open(res_path, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def rescore_project(args, spec):
    """Scores the caught mutations already recorded again with `--ken` (after a change to ken):
    the suite is not run again, since which tests a mutation fails is a fact of the mutation."""
    p = Project(spec, args.work)
    res_path = os.path.join(RESULTS, p.name + ".jsonl")
    if not os.path.exists(res_path) or not os.path.isdir(p.dir):
        return
    git(["checkout", "--", "."], p.dir)
    # The index as this ken builds it (another extractor rebuilds it whole).
    rc, out, err, secs = sh("%s -q index build ." % args.ken, p.dir, timeout=600)
    if rc != 0:
        raise RuntimeError("ken index build failed: " + err[-1000:])
    test_files = p.test_files()
    diff_dir = os.path.join(args.work, p.name + ".diffs")
    os.makedirs(diff_dir, exist_ok=True)
    rows = [json.loads(line) for line in open(res_path) if line.strip()]
    for r in rows:
        if not r.get("caught"):
            continue
        dp = os.path.join(diff_dir, r["id"] + ".diff")
        open(dp, "w").write(r["diff"])
        r["selection"] = score(args.ken, p, dp, [tuple(x) for x in r["failing_tests"]], test_files)
    tmp = res_path + ".tmp"
    with open(tmp, "w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    os.replace(tmp, res_path)
    log("[%s] rescored %d caught mutations with %s" % (p.name, sum(1 for r in rows if r.get("caught")), args.ken))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ken", default="/work/bin/ken-46new")
    ap.add_argument("--work", default="/work/mutation-work")
    ap.add_argument("--projects", default=os.path.join(HERE, "projects.json"))
    ap.add_argument("--only", action="append")
    ap.add_argument("--max-mutations", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=900)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--rescore", action="store_true", help="score the recorded caught mutations again with --ken")
    args = ap.parse_args()
    if args.summary:
        sys.path.insert(0, HERE)
        import summary
        summary.main()
        return
    args.ken = os.path.abspath(args.ken)
    os.makedirs(args.work, exist_ok=True)
    specs = json.load(open(args.projects))["projects"]
    for spec in specs:
        if args.only and spec["name"] not in args.only:
            continue
        if spec.get("disabled") and not args.only:
            continue
        try:
            (rescore_project if args.rescore else run_project)(args, spec)
        except Exception as e:
            log("[%s] FAILED: %s" % (spec["name"], e))


if __name__ == "__main__":
    main()
