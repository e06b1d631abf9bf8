#!/usr/bin/env bash
# The cost curve from 0.1M to 10M lines on one machine:
#
#   benches/scale_curve.sh [TARGET_LINES...]      (default: 100000 300000 1000000 3000000 10000000)
#
# Assembles a mixed tree from the registries under ${KEN_CORPORA:-/tmp/ken-corpora}/scale (never
# committed): every crate this repository depends on (`cargo vendor`), PyPI sdists (Django,
# SymPy, NumPy, SciPy, pandas, Matplotlib, SQLAlchemy, Astropy, Sphinx, ansible-core) and npm
# packages (TypeScript, three, RxJS, ESLint, webpack, date-fns, Vue), pinned below. Each target
# size is a prefix of one fixed file order (packages interleaved across languages), hard-linked
# into its own folder. Per size, on ${KEN_THREADS:-2} threads: the bare tree-sitter parse
# (examples/parse_floor.rs), a full `ken index build` with every default part (time, peak RSS,
# index size), a one-file change rebuilt, and cold one-shot queries (`ken search`, `ken
# context`: median wall time of 5 processes, and the peak RSS of one).
set -euo pipefail
cd "$(dirname "$0")/.."
CORPORA=${KEN_CORPORA:-/tmp/ken-corpora}
SCALE="$CORPORA/scale"
THREADS=${KEN_THREADS:-2}
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(100000 300000 1000000 3000000 10000000)
export RAYON_NUM_THREADS=$THREADS KEN_THREADS=$THREADS
mkdir -p "$SCALE/dl" "$SCALE/src"

PYPI=(Django==5.1.4 sympy==1.13.3 numpy==2.1.3 scipy==1.14.1 pandas==2.2.3 matplotlib==3.9.2
      sqlalchemy==2.0.36 astropy==6.1.4 sphinx==8.1.3 ansible-core==2.17.6)
NPM=(typescript@5.6.3 three@0.170.0 rxjs@7.8.1 eslint@9.14.0 webpack@5.96.1 date-fns@4.1.0 vue@3.5.12)

assemble() {
  [ -d "$SCALE/src/crates" ] || cargo vendor --versioned-dirs --quiet "$SCALE/src/crates" >/dev/null
  # sdists straight from the simple index: `pip download --no-binary` would build each
  # package's metadata, and its build requirements, from source.
  python3 - "$SCALE/dl" "${PYPI[@]}" <<'PY'
import os, re, sys, urllib.request
out, specs = sys.argv[1], sys.argv[2:]
for spec in specs:
    name, version = spec.split("==")
    base = re.sub(r"[-_.]+", "-", name).lower()
    if any(f.lower().replace("_", "-").startswith(f"{base}-{version}.") for f in os.listdir(out)):
        continue
    html = urllib.request.urlopen(f"https://pypi.org/simple/{base}/", timeout=60).read().decode()
    links = re.findall(r'href="([^"#]+)[^"]*"[^>]*>([^<]+)</a>', html)
    url, file = next((u, t) for u, t in links if t.lower().replace("_", "-") == f"{base}-{version}.tar.gz")
    urllib.request.urlretrieve(url, os.path.join(out, file))
PY
  (cd "$SCALE/dl" && for n in "${NPM[@]}"; do
     f="$(echo "${n%@*}" | tr -d @ | tr / -)-${n##*@}.tgz"; [ -f "$f" ] || npm pack --silent "$n" >/dev/null; done)
  for f in "$SCALE"/dl/*; do
    name=$(basename "$f"); name=${name%.tar.gz}; name=${name%.tgz}
    [ -d "$SCALE/src/$name" ] && continue
    mkdir -p "$SCALE/src/$name" && tar xzf "$f" -C "$SCALE/src/$name" --strip-components=1
  done
}

assemble
cargo build --release --quiet --bin ken --example parse_floor
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
KEN="$TARGET_DIR/release/ken"
FLOOR="$TARGET_DIR/release/examples/parse_floor"

# One file order for every size: packages (each crate is one) interleaved round-robin across
# the three sources, files in path order; each size is the shortest prefix reaching it.
python3 - "$SCALE" "${TARGETS[@]}" <<'PY'
import os, sys
scale, targets = sys.argv[1], [int(t) for t in sys.argv[2:]]
src = os.path.join(scale, "src")
EXT = (".py", ".rs", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".java", ".c", ".h", ".cc", ".cpp", ".hpp", ".cxx")
def files(root):
    out = []
    for d, dirs, fs in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        for f in sorted(fs):
            if f.endswith(EXT):
                p = os.path.join(d, f)
                try:
                    with open(p, "rb") as h:
                        n = h.read().count(b"\n")
                except OSError:
                    continue
                out.append((os.path.relpath(p, src), n))
    return out
groups = {"crates": [], "js": [], "py": []}
for name in sorted(os.listdir(src)):
    if name == "crates":
        groups["crates"] += [os.path.join(src, "crates", c) for c in sorted(os.listdir(os.path.join(src, "crates")))]
    elif os.path.exists(os.path.join(src, name, "package.json")):
        groups["js"].append(os.path.join(src, name))
    else:
        groups["py"].append(os.path.join(src, name))
# Python first (the dev set's main language), then JavaScript, then Rust, one package each.
order, queues = [], [groups["py"], groups["js"], groups["crates"]]
while any(queues):
    for q in queues:
        if q:
            order.append(q.pop(0))
listed = [f for pkg in order for f in files(pkg)]
total = sum(n for _, n in listed)
print(f"assembled {len(listed)} source files, {total:,} lines", file=sys.stderr)
for t in targets:
    dest = os.path.join(scale, f"t{t}")
    if os.path.isdir(dest):
        continue
    acc = 0
    for rel, n in listed:
        if acc >= t:
            break
        target = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.link(os.path.join(src, rel), target)
        acc += n
    if acc < t:
        print(f"only {acc:,} lines for the {t:,} target", file=sys.stderr)
PY

measure() { # CMD... -> "seconds peak_mib" (the command's own output discarded)
  local t; t=$(mktemp)
  /usr/bin/time -f "%e %M" -o "$t" "$@" >/dev/null 2>&1 || true
  awk 'END {printf "%s %.0f\n", $1, $2/1024}' "$t"; rm -f "$t"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
cold() { # repeats CMD... -> median seconds
  local n=$1; shift
  for _ in $(seq "$n"); do measure "$@" | cut -d' ' -f1; done | median
}

echo
echo "| lines | files | parse floor | full build | vs floor | build peak MiB | MiB per M lines | index MiB | 1-file change | ken search cold | ken context cold | context peak MiB |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for t in "${TARGETS[@]}"; do
  d="$SCALE/t$t"
  rm -rf "$d/.kenning"
  floor=$("$FLOOR" "$d" 2>&1 | sed -n 's/.* in \([0-9.]*\)s.*/\1/p')
  read -r secs peak < <(measure "$KEN" -q index build "$d")
  status=$("$KEN" index status "$d" 2>/dev/null | sed -n 2p)
  files=$(echo "$status" | awk '{print $1}'); lines=$(echo "$status" | awk '{print $3}')
  size=$(du -sm "$d/.kenning" | cut -f1)
  victim=$(cd "$d" && find . -name '*.py' -size +2k | sort | sed -n 1p)
  cp "$d/$victim" "$d/$victim.orig" && rm "$d/$victim" && cp "$d/$victim.orig" "$d/$victim" && rm "$d/$victim.orig"
  echo "# scale_curve edit" >> "$d/$victim"
  read -r one _ < <(measure "$KEN" -q index build "$d")
  q="parse the configuration file and report an error for unknown keys"
  search=$(cold 5 "$KEN" search "$q" --repo "$d" -q)
  context=$(cold 5 "$KEN" context "$q" --repo "$d" -q)
  read -r _ cpeak < <(measure "$KEN" context "$q" --repo "$d" -q)
  ratio=$(awk -v a="$secs" -v b="$floor" 'BEGIN {printf "%.2fx", a/b}')
  permil=$(awk -v p="$peak" -v l="$lines" 'BEGIN {printf "%.0f", p/(l/1e6)}')
  echo "| $lines | $files | ${floor} s | ${secs} s | $ratio | $peak | $permil | $size | ${one} s | ${search} s | ${context} s | $cpeak |"
done
