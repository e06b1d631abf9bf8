#!/usr/bin/env python3
"""clang_oracle: a compiler-grade oracle of call edges for C and C++, built on clang's JSON AST.

Every translation unit under REPO_DIR (.c as C; .cc, .cpp, .cxx as C++17) is parsed with
`clang -fsyntax-only -Xclang -ast-dump=json` (clang >= 14; Debian: `apt-get install -y clang`),
two at a time, with -I for the repository root and every `include` dir, and -iquote for every
other dir holding headers. Errors are tolerated: clang still builds the AST, and what does not
resolve to a declaration in the repository is simply not emitted. Hidden dirs are skipped;
build*/, cmake-build*/, third_party/, vendor/, external/, deps/, googletest*/ and --exclude'd
dirs are vendored: no translation units there, their include/ dirs are searched, and their
code counts as a dependency's (no occurrences in it, calls into it not emitted).

Usage: python3 benches/oracles/clang_oracle.py REPO_DIR [--exclude=REL_DIR]... [CLANG_FLAG]... > out.json
  Other flags (-D, -I, -std=..) go to clang after the oracle's own (standard library only;
  Python >= 3.8). CLANG_ORACLE_VERBOSE=1 lists the dropped mismatches on stderr.

Output (one JSON object; line and columns 0-based, columns in UTF-8 bytes, end_col exclusive):
  {"encoding": "utf8", "documents": [{"path": "rel/path.c", "occurrences": [
    {"symbol": "rel/path.h:L:C:name", "line": L, "col": C, "end_col": E, "def": bool, "callable": bool}]}]}
A symbol is the position of a declaration's name; all redeclarations of one entity (clang's
previousDecl chain, joined across translation units through the positions they share) get one
symbol, named by its definition where one was seen, and a def occurrence at every one of them.
Definitions: functions, methods, constructors, destructors, records, enums, typedefs, aliases.
References: calls `f(x)`, `ns::f(x)`, `f<T>(x)`, `a.b.f(x)`, `p->f(x)` at the name `f` (also in
template instantiations, where clang resolves dependent calls), and constructions `T(x)`,
`T{x}`, `new T(x)`, `: Base(x)` at the class name: to the constructor when one is declared in
the repository, and to the class (callable only when no constructor was emitted there).
Caveats: operator calls, implicit calls (range-for begin/end, conversions), calls through
function pointers and calls only in never-instantiated templates are not emitted; constructors
are matched by (class, signature type), as clang's JSON names no constructor; a name inside a
macro expansion is taken at its spelling (the #define, or the macro argument) when that is in
the repository; every emitted name is checked against the source text, mismatches dropped.
"""
import bisect, concurrent.futures, json, os, re, subprocess, sys, time

FUNCS = {"FunctionDecl", "CXXMethodDecl", "CXXConstructorDecl", "CXXDestructorDecl", "CXXConversionDecl"}
RECORDS = {"RecordDecl", "CXXRecordDecl", "ClassTemplateSpecializationDecl", "ClassTemplatePartialSpecializationDecl"}
DECLS = FUNCS | RECORDS | {"EnumDecl", "TypedefDecl", "TypeAliasDecl", "FunctionTemplateDecl", "ClassTemplateDecl"}
CALLS = {"CallExpr", "CXXMemberCallExpr"}  # CXXOperatorCallExpr, UserDefinedLiteral: no name
CONSTRUCTS = {"CXXConstructExpr", "CXXTemporaryObjectExpr"}
SKIP = {"build", "third_party", "thirdparty", "3rdparty", "vendor", "external", "deps", "node_modules"}
UNITS, HEADERS = (".c", ".cc", ".cpp", ".cxx"), (".h", ".hh", ".hpp", ".hxx", ".inl", ".inc")
IDENT = re.compile(rb"[A-Za-z_0-9]")
QUALIFIERS = re.compile(rb"(?:::\s*)?(?:[A-Za-z_]\w*\s*::\s*)*")
FILE_EVENTS = re.compile(rb'"(includedFrom|file)": (?:\{\n *"file": )?"([^\n]*?)",?\n')  # includedFrom: no change


def skipped_dir(name):
    return name.startswith(".") or name in SKIP or name.startswith(("build", "cmake-build", "googletest"))


def scan(root, excludes):
    units, incs, vendored_dirs = [], [root], []
    for d, subdirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        subdirs[:] = sorted(s for s in subdirs if not s.startswith("."))
        hidden = any(p.startswith(".") for p in rel.split(os.sep) if p != ".")
        vendored = rel != "." and any(skipped_dir(p) for p in rel.split(os.sep))
        vendored |= any(rel == e or rel.startswith(e + os.sep) for e in excludes)
        if not hidden and (os.path.basename(d) == "include" or not vendored and any(f.endswith(HEADERS) for f in files)):
            incs.append(d)  # a vendored tree's headers by its include/ dirs only
        if vendored:
            if not (rel.replace(os.sep, "/") + "/").startswith(tuple(vendored_dirs)):
                vendored_dirs.append(rel.replace(os.sep, "/") + "/")
            continue
        units += [os.path.join(d, f) for f in sorted(files) if f.endswith(UNITS)]
    incs.sort(key=lambda p: (os.path.basename(p) != "include", p.count(os.sep), p))
    return units, list(dict.fromkeys(incs)), tuple(vendored_dirs)


class Files:
    """Source texts and line starts, by clang's file name; rel is None outside the repository
    and in its vendored dirs (whose code is treated as a dependency's)."""

    def __init__(self, root, vendored=()):
        self.root, self.vendored, self.cache = root, vendored, {}

    def get(self, name):
        f = self.cache.get(name)
        if f is None:
            p = os.path.normpath(name)
            rel = os.path.relpath(p, self.root).replace(os.sep, "/") if p.startswith(self.root + os.sep) else None
            if rel is not None and rel.startswith(self.vendored):
                rel = None
            text = b""
            if rel is not None:
                try:
                    text = open(p, "rb").read()
                except OSError:
                    rel = None
            starts = [0] + [m.end() for m in re.finditer(b"\n", text)]
            f = self.cache[name] = (rel, text, starts)
        return f

    def line_col(self, rel, off):
        _, _, starts = self.get(os.path.join(self.root, rel))
        line = bisect.bisect_right(starts, off) - 1
        return line, off - starts[line]


def strip_args(t):  # "a::B<int, C<D>>::E" -> "a::B::E"
    out, depth = [], 0
    for ch in t:
        depth += (ch == "<") - (ch == ">")
        if depth == 0 and ch != ">":
            out.append(ch)
    return "".join(out).strip()


def skip_angles(text, i):  # text[i] == '<': index after the matching '>'
    depth = 0
    while i < len(text):
        depth += {60: 1, 62: -1}.get(text[i], 0)
        i += 1
        if depth == 0 or text[i - 1] in b";{}":
            return i
    return i


class Unit:
    """One translation unit's walk: carries the last printed file, as clang prints a location's
    file only when it changes (in document order), and resolves ids at the end."""

    def __init__(self, files):
        self.files, self.cur = files, None
        self.ids, self.ctors, self.records = {}, {}, {}
        self.defs, self.definitions, self.links = [], set(), []
        self.calls, self.constructs, self.mismatches, self.skipped = [], [], set(), set()

    def bare(self, l):
        if "file" in l:
            self.cur = l["file"]
        return (self.cur, l["offset"]) if "offset" in l and self.cur else None

    def loc(self, l):  # a macro location is taken at its spelling (checked against the text later)
        if not l:
            return None
        if "spellingLoc" in l:
            s = self.bare(l["spellingLoc"])
            self.bare(l["expansionLoc"])
            return s
        return self.bare(l)

    def at(self, pos, name, search_back=False):
        """(rel, offset) of `name` at pos (or, with search_back, just before the template
        arguments ending at pos), when the text is there; None when pos is outside the repo."""
        if pos is None:
            return None
        rel, text, _ = self.files.get(pos[0])
        if rel is None:
            return None
        off, nb = pos[1], name.encode()
        if search_back and text[off:off + len(nb)] != nb and text[off:off + 1] == b">":
            i, depth, parens = off, 0, 0  # back to the matching '<', skipping (..) as in `f<(a << 2)>`
            while i >= 0:
                parens += {41: 1, 40: -1}.get(text[i], 0)
                depth += {62: 1, 60: -1}.get(text[i], 0) if parens == 0 else 0
                if depth == 0:
                    break
                i -= 1
            j = i
            while j > 0 and text[j - 1:j].isspace():
                j -= 1
            off = j - len(nb)
        if off >= 0 and text[off:off + len(nb)] == nb and not IDENT.match(text, off + len(nb)):
            return rel, off
        self.mismatches.add((rel, pos[1], name))
        return None

    def walk(self, n, scope, in_record=False, implicit=False):
        kind, name = n.get("kind"), n.get("name")
        operator = bool(name) and name.startswith("operator") and not IDENT.match(name.encode(), 8)
        if name and not operator:
            name = strip_args(name)  # a template's constructor is named "Box<T>"
        implicit = implicit or bool(n.get("isImplicit")) and kind != "LinkageSpecDecl"  # range-for's begin()
        pos = self.loc(n.get("loc"))
        rng = n.get("range") or {}
        begin, end = self.loc(rng.get("begin")), self.loc(rng.get("end"))
        if kind in DECLS and name and not implicit and pos:
            if operator:
                self.skipped.add(pos)
            elif p := self.at(pos, name):
                key = p + (name,)
                self.ids[n["id"]] = key
                self.defs.append((key, kind in FUNCS))
                if "previousDecl" in n:
                    self.links.append((n["id"], n["previousDecl"]))
                inner = n.get("inner") or []
                if n.get("completeDefinition") or any(c.get("kind") in ("CompoundStmt", "CXXTryStmt") for c in inner) \
                        or n.get("explicitlyDefaulted") or kind in ("TypedefDecl", "TypeAliasDecl", "EnumDecl"):
                    self.definitions.add(key)
                if kind in RECORDS:
                    self.records.setdefault("::".join(scope + [name]), []).append(key)
                if kind == "CXXConstructorDecl" and in_record:
                    self.ctors.setdefault(("::".join(scope), n["type"]["qualType"]), []).append(key)
        if kind in CALLS and n.get("inner"):
            callee = n["inner"][0]
            while callee.get("kind") in ("ImplicitCastExpr", "ParenExpr") and len(callee.get("inner") or []) == 1:
                callee = callee["inner"][0]
            callee["_call"] = True
        elif implicit:
            pass
        elif n.get("_call") and kind == "DeclRefExpr" and n["referencedDecl"].get("kind") in FUNCS:
            self.call(end, n["referencedDecl"]["name"], n["referencedDecl"]["id"])
        elif n.get("_call") and kind == "MemberExpr" and name:
            self.call(end, name, n.get("referencedMemberDecl"))
        elif kind in CONSTRUCTS and begin and "ctorType" in n:
            t = n["type"].get("desugaredQualType", n["type"]["qualType"])
            t = re.sub(r"^(?:const |volatile |struct |class |union )+", "", t)
            qual = strip_args(t)
            rel, text, _ = self.files.get(begin[0])
            if rel is not None and qual:
                cls = qual.split("::")[-1].encode()
                i = QUALIFIERS.match(text, begin[1]).end()
                if text[i:i + len(cls)] == cls and not IDENT.match(text, i + len(cls)):
                    j = i + len(cls)
                    while text[j:j + 1].isspace():
                        j += 1
                    if text[j:j + 1] == b"<":
                        j = skip_angles(text, j)
                        while text[j:j + 1].isspace():
                            j += 1
                    if text[j:j + 1] in (b"(", b"{"):
                        self.constructs.append(((rel, i, cls.decode()), qual, n["ctorType"]["qualType"]))
        if kind == "NamespaceDecl" and not n.get("isInline"):
            scope = scope + [name or "(anonymous namespace)"]
        elif kind in RECORDS and name:
            scope = scope + [name]
        for c in n.get("inner") or ():
            self.walk(c, scope, kind in RECORDS or in_record and kind == "FunctionTemplateDecl", implicit)

    def call(self, end, name, target):
        if name.startswith("operator") and not IDENT.match(name.encode(), 8):
            self.skipped.add(end)
        elif target and (p := self.at(end, name, search_back=True)):
            self.calls.append((p + (name,), target))

    def result(self):
        links = [(self.ids[a], self.ids[b]) for a, b in self.links if a in self.ids and b in self.ids]
        refs = [(site, self.ids[t], True) for site, t in self.calls if t in self.ids]
        for site, qual, ctor_type in self.constructs:
            ctors = self.ctors.get((qual, ctor_type), [])
            refs += [(site, k, True) for k in ctors]
            refs += [(site, k, not ctors) for k in self.records.get(qual, [])]
        return self.defs, self.definitions, links, refs, self.mismatches, self.skipped


def index_unit(root, vendored, path, flags):
    cxx = not path.endswith(".c")
    cmd = ["clang", "-fsyntax-only", "-w", "-ferror-limit=0", "-Xclang", "-ast-dump=json"]
    cmd += (["-x", "c++", "-std=c++17"] if cxx else ["-x", "c"]) + flags + [path]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, errors = p.stdout, p.stderr.count(b"error:")  # bytes: C++ TUs dump up to ~1 GB
    files = Files(root, vendored)
    unit = Unit(files)
    starts = [m.start() + 1 for m in re.finditer(rb"\n    \{\n", out)]  # the top-level declarations
    if not starts:
        return None, errors
    ends = starts[1:] + [out.rfind(b"\n  ]")]
    events = [(m.start(), m.group(2)) for m in FILE_EVENTS.finditer(out) if m.group(1) == b"file"]
    names = [json.loads(b'"%s"' % f) if b"\\" in f else f.decode() for _, f in events]
    where = [e[0] for e in events]
    for s, e in zip(starts, ends):
        i, j = bisect.bisect_left(where, s), bisect.bisect_left(where, e)
        carried = names[i - 1] if i else None
        if not any(files.get(f)[0] is not None for f in ([carried] if carried else []) + names[i:j]):
            continue
        unit.cur = carried
        unit.walk(json.loads(out[s:e].rstrip().rstrip(b",")), [])
    return unit.result(), errors


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit("usage: clang_oracle.py REPO_DIR [--exclude=REL_DIR]... [CLANG_FLAG]... > out.json")
    sys.setrecursionlimit(1_000_000)
    t0, root = time.time(), os.path.realpath(args[0])
    excludes = [a.split("=", 1)[1].strip("/") for a in args[1:] if a.startswith("--exclude=")]
    units, incs, vendored = scan(root, excludes)
    flags = [("-I" if d == root or os.path.basename(d) == "include" else "-iquote") + d for d in incs]
    flags += [a for a in args[1:] if not a.startswith("--exclude=")]
    parent, defs, definitions, refs = {}, {}, set(), {}
    mismatches, skipped, failed, with_errors = set(), set(), [], 0

    def find(k):
        while parent.get(k, k) != k:
            parent[k] = parent.get(parent[k], parent[k])
            k = parent[k]
        return k

    with concurrent.futures.ProcessPoolExecutor(max_workers=2) as pool:
        futures = {pool.submit(index_unit, root, vendored, u, flags): u for u in units}
        for fut in concurrent.futures.as_completed(futures):
            res, errors = fut.result()
            with_errors += errors > 0
            if res is None:
                failed.append(os.path.relpath(futures[fut], root))
                continue
            d, dfn, ln, rf, mm, sk = res
            for k, callable_ in d:
                defs[k] = defs.get(k, False) or callable_
            definitions |= dfn
            mismatches |= mm
            skipped |= sk
            for a, b in ln:
                ra, rb = find(a), find(b)
                if ra != rb:
                    parent[ra] = rb
            for site, target, callable_ in rf:
                refs[(site, target)] = refs.get((site, target), False) or callable_
    files = Files(root, vendored)
    best = {}  # root of a set of redeclarations -> its name: the first definition, else the first declaration
    for k in sorted(defs):
        r = find(k)
        if r not in best or (k in definitions and best[r] not in definitions):
            best[r] = k

    def symbol(k):
        b = best[find(k)]
        line, col = files.line_col(b[0], b[1])
        return "%s:%d:%d:%s" % (b[0], line, col, b[2])

    docs, seen = {}, {}
    occs = [(k, symbol(k), True, c) for k, c in defs.items()]
    occs += [(site, symbol(t), False, c) for (site, t), c in refs.items() if t in defs]
    for (rel, off, name), sym, is_def, callable_ in occs:
        line, col = files.line_col(rel, off)
        key = (rel, line, col, sym, is_def)
        if key in seen:
            seen[key]["callable"] |= callable_
            continue
        o = seen[key] = {"symbol": sym, "line": line, "col": col, "end_col": col + len(name.encode()),
                         "def": is_def, "callable": callable_}
        docs.setdefault(rel, []).append(o)
    out = {"encoding": "utf8", "documents": [
        {"path": p, "occurrences": sorted(v, key=lambda o: (o["line"], o["col"], not o["def"], o["symbol"]))}
        for p, v in sorted(docs.items())]}
    if os.environ.get("CLANG_ORACLE_VERBOSE"):
        for rel, off, name in sorted(mismatches):
            print("mismatch: %s:%d:%d: %s" % ((rel,) + tuple(x + 1 for x in files.line_col(rel, off)) + (name,)), file=sys.stderr)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    calls = sum(1 for o in seen.values() if not o["def"] and o["callable"])
    print("clang_oracle: %d translation units (%d with errors, %d without an AST%s), %d documents, %d defs, "
          "%d callable refs, %d non-callable refs, %d mismatches dropped, %d operators skipped, %.1fs"
          % (len(units), with_errors, len(failed), (": " + " ".join(sorted(failed))) if failed else "", len(docs),
             sum(1 for o in seen.values() if o["def"]), calls, sum(1 for o in seen.values() if not o["def"]) - calls,
             len(mismatches), len(skipped), time.time() - t0), file=sys.stderr)


if __name__ == "__main__":
    main()
