#!/usr/bin/env python3
"""Mines (description, code) training pairs for the code-search embedding model from bare git
mirrors: every documented definition (a Python docstring, or a doc comment directly above a
declaration) gives one pair, the comment's first paragraph as the description and the
definition's source, without that comment, as the code. Standard library only.

    mine_pairs.py --mirrors /work/.mirror --out pairs.jsonl \\
        --repo Textualize/rich:python --repo hyperium/hyper:rust@<commit> ...
        [--per-repo 4000] [--max-code-lines 60] [--max-file-kb 300]

Mirrors are bare clones at MIRRORS/<owner>+<name>/repo; files are read straight from git
(`ls-tree` plus one long-running `cat-file --batch`), no checkout. Each output line is
{"repo","language","path","line","name","container","signature","description","code","test"};
`test` marks pairs from test-looking paths so they can be filtered out later. Descriptions are
deduplicated per repository and at most --per-repo pairs are kept (random.Random(7) sample).
Python uses `ast`; the other languages are read line by line with brace matching over the
text with strings and comments blanked out, which is a heuristic, not a parser.
"""
import argparse, ast, html, json, os, random, re, subprocess, sys, time, warnings

EXTS = {"python": (".py",), "rust": (".rs",), "go": (".go",), "java": (".java",),
        "javascript": (".js", ".mjs", ".cjs", ".jsx"), "typescript": (".ts", ".tsx"),
        "c": (".c", ".h"), "cpp": (".cc", ".cpp", ".cxx", ".hpp", ".hh", ".h")}
# vendored copies (also `googletest-1.16.0/`), bundles, generated code
SKIP_PATH = re.compile(r"(^|/)(vendor|third_party|node_modules|dist|build|[\w+-]+-\d+\.\d+[\w.]*)/"
                       r"|\.min\.js$|\.d\.ts$|generated|\.pb\.(go|cc|h)$|_pb2\.py$", re.I)
TEST_PATH = re.compile(r"(^|/)(tests?|testing|testes|testdata|__tests__|spec|specs)/|(^|/)test_[^/]*$"
                       r"|([_.\-]tests?|[_.]spec|Tests?)\.\w+$|(^|/)conftest\.py$")
BOILERPLATE = re.compile(r"(copyright|spdx|licensed|todo|fixme|deprecated|@|generated|\$id|"
                         r"requires:|nolint|eslint|istanbul|prettier-ignore)", re.I)
SECTION = re.compile(r"^(#+\s*)?(args|arguments|parameters|params|returns?|raises|yields|examples?|"
                     r"notes?|see also|attributes|panics|errors|safety|usage)\s*:?\s*$", re.I)
# Strings, char literals and comments, blanked out before brace matching.
NOISE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"|`(?:\\.|[^`\\])*`"
                   r"|'(?:\\.[^'\n]{0,8}|[^'\\\n])'", re.S)
RUST_DECL = re.compile(r"^\s*(#\[[^\]]*\]\s*)*(pub(\([^)]*\))?\s+)?((async|unsafe|const|default|"
                       r"extern(\s+\"[^\"]*\")?)\s+)*(fn|struct|enum|trait|impl|type|const|static|mod|union)\b"
                       r"|^\s*macro_rules!")
GO_DECL = re.compile(r"^(func|type|var|const)\b")
CONTROL = re.compile(r"^(if|else|for|while|do|switch|case|return|throw|try|catch|finally|new|delete|"
                     r"goto|break|continue|sizeof|yield|await|with|assert|using|import|package|include)\b")
DECL_KW = re.compile(r"^(export|class|interface|enum|struct|union|type|typedef|function|async|const|let|"
                     r"var|public|private|protected|static|abstract|final|namespace|template|inline|"
                     r"extern|virtual|explicit|declare|readonly|override|synchronized|native|module)\b")
TOP_JS = re.compile(r"(export|function|async|const|let|var|class|abstract|interface|type|enum)\b")
ATTRIBUTE = re.compile(r"^\s*(#!?\[.*\]|#!?\[[^\]]*|@[\w.]+\s*(\(.*\))?|@[\w.]+\s*\([^)]*"
                       r"|template\s*<.*>|\[\[.*\]\])\s*(//.*)?$")
CONTAINER = re.compile(r"\b(class|struct|interface|enum|trait|impl|union|namespace|mod|record|extern)\b"
                       r"([^()]*)$")
MACRO = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+")  # LEVELDB_EXPORT in `class LEVELDB_EXPORT DB {`
KEYWORDS = {"class", "struct", "enum", "interface", "fn", "function", "const", "mut", "static",
            "type", "unsafe", "async", "pub", "int", "void", "for", "return", "extern", "inline"}


def blob_reader(mirror):
    """One `git cat-file --batch` process; returns a function sha -> bytes."""
    proc = subprocess.Popen(["git", "-C", mirror, "cat-file", "--batch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    def read(sha):
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()  # <sha> blob <size>, then the bytes and a newline
        return proc.stdout.read(int(header[2]) + 1)[:-1] if len(header) == 3 else b""
    return read, proc


def inline_tag(m):
    """{@link Foo#bar label} -> label, {@link Foo#bar} -> Foo.bar, {@code x + 1} -> x + 1."""
    if m.group(1) not in ("link", "linkplain", "see"):
        return m.group(2)
    target, _, label = m.group(2).partition(" ")
    return label.strip() or target.lstrip("#").replace("#", ".")


def clean_description(lines):
    """Comment text (markers already stripped) -> its first paragraph, markup removed."""
    free, tags, fence = [], {}, False
    cur = free
    for ln in lines:
        s = ln.strip()
        if s.startswith("```"):  # Rust doc-tests and other fenced examples
            fence = not fence
            continue
        if fence:
            continue
        m = re.match(r"[@\\](\w+)\b\s*(.*)", s) or re.match(r":(param|type|returns?|rtype|raises?)\b(.*)", s)
        if m:  # a block tag (@param, \brief, :param ...): its text goes to that tag
            cur = tags.setdefault(m.group(1), [])
            s = m.group(2).strip()
        cur.append(s)
    for body in (free, tags.get("description", []), tags.get("brief", []), tags.get("summary", [])):
        para = []
        for s in body:
            s = re.sub(r"^#+\s+", "", re.sub(r"[={}*\-]{4,}", " ", s).strip())  # headings, banners
            if not s or SECTION.match(s) or s.startswith(">>>") or re.match(r"([-*+]|\d+[.)])\s", s):
                if para:
                    break
                continue
            para.append(s)
        desc = " ".join(para)
        desc = re.sub(r"\{@(\w+)\s+([^}]*)\}", inline_tag, desc)
        desc = re.split(r"(?i)<\s*p\s*/?>", desc)[0] or desc  # javadoc paragraph break
        desc = html.unescape(re.sub(r"</?\w+[^>]*>", "", desc))
        desc = re.sub(r"\[([^\]]+)\](\([^)]*\)|\[[^\]]*\])?", r"\1", desc)  # markdown, intra-doc links
        desc = re.sub(r":\w+:(\w+:)?`~?([^`]+)`", r"\2", desc)  # reST roles
        desc = re.sub(r"^[\w:]+\(\)\s*:\s+", "", desc)  # zstd style `ZSTD_foo() : does x`
        desc = " ".join(re.sub(r"[\x00-\x1f]", " ", desc.replace("`", "")).split()).strip(" /*")
        if desc:
            return desc
    return ""


def accept(desc):
    """Applies the word-count and boilerplate filters; returns the (maybe cut) text or None."""
    words = desc.split()
    if len(words) < 4 or BOILERPLATE.match(desc):
        return None
    plain = sum(bool(re.fullmatch(r"[A-Za-z][a-z'\-]*[.,:;!?]?", w)) for w in words)
    if plain < 0.5 * len(words) or re.search(r"[;{]\s*$|\w\(.*\);", desc):
        return None  # mostly identifiers or punctuation: commented-out code, tables, ascii art
    if len(words) > 60:
        cut = " ".join(words[:60])
        end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
        desc = cut[:end + 1] if cut[:end].count(" ") >= 3 else cut
    return desc


def python_description(lines):
    """Docstring -> description; drops a property's leading `type:` (`float: Get the time.`)."""
    return re.sub(r"^[\w.]+(\[[\w.\[\], ]*\])?:\s+(?=[A-Z])", "", clean_description(lines))


def python_defs(src):
    """Yields (line, name, container, signature, description, code_lines) for documented defs."""
    lines = src.split("\n")
    def walk(node, classes):
        for ch in ast.iter_child_nodes(node):
            if not isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from walk(ch, classes)  # defs under if/try/with blocks
                continue
            doc = ast.get_docstring(ch)
            first = ch.body[0]
            if doc and first.lineno > ch.lineno:
                start = min([ch.lineno] + [d.lineno for d in ch.decorator_list])
                head = " ".join(l.strip() for l in lines[ch.lineno - 1:first.lineno - 1])
                head = re.sub(r"\(\s+", "(", re.sub(r",?\s+\)", ")", head))
                rest = "\n".join(lines[first.end_lineno:ch.end_lineno]).lstrip(" \t\n")
                code = lines[start - 1:first.lineno - 1] + [" " * first.col_offset + rest]
                yield ch.lineno, ch.name, ".".join(classes), head, doc.split("\n"), code
            yield from walk(ch, classes + [ch.name] if isinstance(ch, ast.ClassDef) else classes)
    yield from walk(ast.parse(src), [])


def comment_block(lines, i, lang):
    """If a doc comment starts at line i, returns (end_line, text_lines, is_doc_marker)."""
    s = lines[i].lstrip()
    if s.startswith("/**") and not s.startswith("/**/") or s.startswith("/*!") or (
            lang in ("c", "cpp") and s.startswith("/*")):
        j = i
        while "*/" not in lines[j][(lines[j].find("/*") + 2) if j == i else 0:]:
            j += 1
            if j >= len(lines):
                return None
        if lines[j].split("*/", 1)[1].strip():
            return None  # code follows the comment on the same line
        body = "\n".join(lines[i:j + 1]).strip()[2:].lstrip("*!").rsplit("*/", 1)[0].split("\n")
        return j, [re.sub(r"^\s*\*+ ?", "", ln) for ln in body], s[2:3] in ("*", "!")
    marker = {"rust": "///", "java": None, "python": None}.get(lang, "//")
    if not marker or not s.startswith(marker) or (lang == "rust" and s.startswith("////")):
        return None
    j = i
    while j + 1 < len(lines) and lines[j + 1].lstrip().startswith(marker):
        j += 1
    body = [ln.lstrip()[len(marker):].lstrip("/!") for ln in lines[i:j + 1]]
    body = [ln[1:] if ln.startswith(" ") else ln for ln in body
            if not re.match(r"\s*(go:|\+build|nolint|lint:|NOLINT|eslint|@ts-|istanbul|prettier|tslint)", ln)]
    return j, body, marker == "///"


def is_decl(lang, line):
    """Whether a line looks like it declares something (not a statement)."""
    if lang == "rust":
        return bool(RUST_DECL.match(line))
    if lang == "go":
        return bool(GO_DECL.match(line))
    if lang in ("c", "cpp") and re.match(r"\s*#\s*define\s", line):
        return True  # a macro; only multi-line ones pass the two-line minimum
    s = line.strip()
    if not re.match(r"[A-Za-z_$@~\[]", s) or CONTROL.match(s):
        return False
    return bool(DECL_KW.match(s) or re.search(r"[A-Za-z_$][\w$]*\s*(<[^()]*>)?\s*\(", s))


def contexts(masked):
    """Per line: the stack of enclosing `{` blocks as (is_container, name) at the line's start."""
    starts = [0] + [m.end() for m in re.finditer("\n", masked)]
    events = [(m.start(), m.group()) for m in re.finditer(r"[{};]", masked)]
    out, stack, stmt, e = [], [], 0, 0
    for off in starts:
        while e < len(events) and events[e][0] < off:
            pos, ch = events[e]
            e += 1
            if ch == "{":
                m = CONTAINER.search(masked[stmt:pos])
                name = ""
                if m and m.group(1) not in ("namespace", "mod", "extern"):
                    rest = re.sub(r"<[^<>]*>", "", m.group(2))  # generics
                    rest = rest.split(" for ", 1)[-1] if m.group(1) == "impl" else rest
                    w = [x for x in re.findall(r"[A-Za-z_$][\w$]*", rest) if not MACRO.fullmatch(x)]
                    name = next((x for x in w if x not in KEYWORDS), "")
                stack.append((bool(m), name))
            elif ch == "}" and stack:
                stack.pop()
            stmt = pos + 1
        out.append(tuple(stack))
    return out


def extent(mlines, i, lang):
    """Last line of the definition starting at line i (brace matching on blanked text)."""
    depth = par = 0
    opened = False
    if mlines[i].lstrip().startswith("#"):  # a macro: up to the last continued line
        while i + 1 < len(mlines) and mlines[i].rstrip().endswith("\\"):
            i += 1
        return i
    for j in range(i, len(mlines)):
        if j > i and not opened and par <= 0 and not mlines[j].strip():
            return j - 1
        for m in re.finditer(r"[()\[\]{};]", mlines[j]):
            ch = m.group()
            type_brace = lang == "typescript" and not opened and \
                mlines[j][:m.start()].rstrip()[-1:] in (":", "<", "|", "&", ",")  # `): { a: T } {`
            if ch in "([" or (ch == "{" and (par > 0 or type_brace)):
                par += 1
            elif ch in ")]" or (ch == "}" and par > 0):
                par -= 1
            elif ch == "{":
                depth, opened = depth + 1, True
            elif ch == "}":
                depth -= 1
                if depth <= 0:
                    return j if opened else max(i, j - 1)  # else: the enclosing block closed
            elif ch == ";" and not opened and par <= 0:
                return j
        if not opened and par <= 0 and (lang == "go" or j - i > 20):
            return j if lang == "go" else i
        if not opened and par <= 0 and lang in ("javascript", "typescript") and not (
                re.search(r"[=,(<>|&+\-*/?:.]\s*$", mlines[j]) or j + 1 < len(mlines)
                and re.match(r"\s*([|&.?:+\-*/=>){]|extends|implements)", mlines[j + 1])):
            return j  # no semicolon, nothing open and the statement does not go on
    return len(mlines) - 1


def decl_name(lang, sig):
    sig = re.sub(r"@\w+(\([^)]*\))?\s*", "", sig)
    """The defined name in a declaration line: tried pattern by pattern, first hit wins."""
    pats = [r"([\w$]+)\s*[:=]\s*(?:async\s+)?function\b",
            r"\b(?:fn|function\*?|func(?:\s*\([^)]*\))?)\s+([\w$]+)", r"macro_rules!\s*(\w+)",
            r"\bimpl\b(?:<.*?>)?\s+(?:.*\bfor\s+)?&?([\w:]+)",
            r"\b(?:class|interface|enum|struct|union|trait|namespace|record|type|mod)\s+"
            r"(?:[A-Z0-9]+_[A-Z0-9_]+\s+)?([\w$]+)", r"\b(?:const|let|var|static)\s+(?:mut\s+)?([\w$]+)"]
    call = [r"#\s*define\s+(\w+)", r"\((\w+)\)\s*\(",  # lua's `int (lua_gettop) (lua_State *L)`
            r"([A-Za-z_$~][\w$]*(?:::~?[\w$]+)*)\s*(?:<[^()]*>)?\s*\("]
    if lang in ("c", "cpp", "java"):  # `static int f(`: the modifiers are no names there
        pats = call + pats[:5] + [r"([\w$]+)\s*(?:\[[^\]]*\]\s*)?=[^=]", r"([\w$]+)\s*;?$"]
    else:
        pats = pats + call[2:]
    for p in pats:
        for m in re.finditer(p, sig):
            if m.group(1) not in KEYWORDS:
                return m.group(1)
    return ""


def brace_defs(src, lang):
    """Like python_defs, for the brace languages: doc comment, then a declaration line."""
    lines = src.split("\n")
    masked = NOISE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), src)
    mlines, ctx = masked.split("\n"), contexts(masked)
    i = 0
    while i < len(lines):
        block = comment_block(lines, i, lang)
        if not block:
            i += 1
            continue
        end, text, doc = block
        i = d = end + 1
        if doc and d < len(lines) and not lines[d].strip():
            d += 1  # one blank line may follow a /** */ or /// comment
        bal = 0  # skip attributes, annotations, template<> lines, stray // lines between
        while d < len(lines) and (bal > 0 or ATTRIBUTE.match(lines[d]) or (
                lang in ("java", "javascript", "typescript", "rust") and lines[d].lstrip().startswith("//"))):
            bal += len(re.findall(r"[(\[]", mlines[d])) - len(re.findall(r"[)\]]", mlines[d]))
            d += 1
        if d >= len(lines) or not is_decl(lang, lines[d]):
            continue
        if lang in ("javascript", "typescript") and not doc and not TOP_JS.match(lines[d]):
            continue  # plain // comments count only above top-level declarations
        if lang in ("c", "cpp", "java") and not all(c for c, _ in ctx[d]):
            continue  # inside a function body: a comment above a statement
        last = extent(mlines, d, lang)
        if last <= d:
            continue  # a one-line declaration (attribute lines do not count)
        sig, head = lines[d].strip(), d
        while lang in ("c", "cpp") and not re.search(r"[({=;]", sig) and head < min(last, d + 3):
            head += 1
            sig += " " + lines[head].strip()
        header = " ".join(l.strip() for l in lines[d:min(last, d + 6) + 1])
        name = decl_name(lang, sig) or decl_name(lang, re.split(r"[{=]", header)[0]) \
            or decl_name(lang, re.sub(r"^\W+", "", lines[last]))  # typedef struct {...} Name;
        names = [n for _, n in ctx[d] if n]
        if "::" in name:
            names.append(name.rsplit("::", 1)[0])
            name = name.rsplit("::", 1)[1]
        names += re.findall(r"^func\s*\(\s*\w*\s*\*?(\w+)", sig) if lang == "go" else []  # receiver
        yield d + 1, name, ".".join(names), sig, text, lines[end + 1:last + 1]


def mine_repo(mirror, repo, lang, commit, args):
    """Returns (files read, pairs) for one repository at one commit."""
    read, proc = blob_reader(mirror)
    tree = subprocess.run(["git", "-C", mirror, "ls-tree", "-r", "-l", "-z", commit],
                          capture_output=True, check=True).stdout.decode("utf-8", "replace")
    pairs, seen, nfiles = [], set(), 0
    for entry in tree.split("\0"):
        if "\t" not in entry:
            continue
        meta, path = entry.split("\t", 1)
        _, kind, sha, size = meta.split()
        # A snapshot may list a blob it does not hold (its size reads as not a number).
        if kind != "blob" or not path.endswith(EXTS[lang]) or SKIP_PATH.search(path) \
                or not size.isdigit() or int(size) > args.max_file_kb * 1024:
            continue
        src = read(sha).decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
        nfiles += 1
        try:
            defs = list(python_defs(src) if lang == "python" else brace_defs(src, lang))
        except (SyntaxError, ValueError, RecursionError):
            continue
        for line, name, container, sig, text, code in defs:
            desc = accept((python_description if lang == "python" else clean_description)(text))
            code = re.sub(r"^([ \t]*\n)+", "", "\n".join(code).rstrip()).split("\n")
            if not desc or len(code) < 2 or desc in seen:
                continue
            seen.add(desc)
            pairs.append({"repo": repo, "language": lang, "path": path, "line": line, "name": name,
                          "container": container, "signature": sig[:300], "description": desc,
                          "code": "\n".join(code[:args.max_code_lines]),
                          "test": bool(TEST_PATH.search(path))})
    proc.stdin.close(), proc.wait()
    if len(pairs) > args.per_repo:
        keep = sorted(random.Random(7).sample(range(len(pairs)), args.per_repo))
        pairs = [pairs[k] for k in keep]
    return nfiles, pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", required=True, help="folder of bare clones <owner>+<name>/repo")
    ap.add_argument("--repo", action="append", required=True, help="OWNER/NAME:LANG[@COMMIT]")
    ap.add_argument("--out", required=True, help="output .jsonl")
    ap.add_argument("--per-repo", type=int, default=4000)
    ap.add_argument("--max-code-lines", type=int, default=60)
    ap.add_argument("--max-file-kb", type=int, default=300)
    args = ap.parse_args()
    warnings.simplefilter("ignore")  # SyntaxWarnings from odd escapes in parsed Python
    sys.setrecursionlimit(10000)
    with open(args.out, "w") as out:
        for spec in args.repo:
            m = re.fullmatch(r"([\w.\-]+)/([\w.\-]+):(\w+)(?:@(\S+))?", spec)
            if not m or m.group(3) not in EXTS:
                sys.exit(f"bad --repo {spec!r}: want OWNER/NAME:LANG[@COMMIT], LANG in {sorted(EXTS)}")
            owner, name, lang, commit = m.group(1), m.group(2), m.group(3), m.group(4) or "HEAD"
            t0 = time.time()
            mirror = os.path.join(args.mirrors, f"{owner}+{name}", "repo")
            if not os.path.isdir(mirror):
                sys.exit(f"no mirror at {mirror}")
            nfiles, pairs = mine_repo(mirror, f"{owner}/{name}", lang, commit, args)
            for p in pairs:
                out.write(json.dumps(p, ensure_ascii=False) + "\n")
            print(f"{owner}/{name} ({lang}): {nfiles} files read, {len(pairs)} pairs kept, "
                  f"{time.time() - t0:.1f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
