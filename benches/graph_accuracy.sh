#!/usr/bin/env bash
# Accuracy of the code graph's call edges against independent oracles (SCIP indexes, or the
# JSON occurrences of the two compiler-based oracles in benches/oracles/):
#   Python      scip-python 0.6.6 (pyright)             on requests, flask, pylint
#   TypeScript  scip-typescript 0.4.0 (tsc)             on ky, zod (packages/zod)
#   JavaScript  scip-typescript 0.4.0 (tsc, allowJs)    on express, commander
#   Rust        rust-analyzer (rustup component)         on bytes, fd
#   Go          benches/oracles/go_oracle.go (go/types)  on pflag, toml, mux
#   Java        benches/oracles/JavaOracle.java (javac)  on gson (gson/), jsoup
#   C, C++      benches/oracles/clang_oracle.py (clang's JSON AST)  on cjson, yamlcpp
# (No SCIP indexer for Go, Java or C/C++ installs from the registries this project may use:
# scip-go needs the Go module proxy, scip-java Maven Central, scip-clang GitHub releases.)
# Each project is checked out at a pinned commit, indexed by its oracle, then scored by
# benches/graph_accuracy.rs (precision per provenance, recall over the oracle's call sites).
#
#   benches/graph_accuracy.sh [name...]
#     names: requests flask pylint ky zod express commander bytes fd pflag toml mux gson jsoup
#            cjson yamlcpp
#
# Work folder: ${KEN_ORACLE:-/tmp/ken-oracle}. Sources come from bare mirrors under
# ${EVAL_MIRRORS} when set (<owner>+<name>/repo), else from GitHub. Needs node>=20 + npm, git,
# `rustup component add rust-analyzer` for the Rust oracle (it runs `cargo metadata`), Go >= 1.19
# (Debian's golang-go), a JDK >= 17 and clang (Debian's clang 14) for C/C++.
set -euo pipefail
cd "$(dirname "$0")/.."
O=${KEN_ORACLE:-/tmp/ken-oracle}
mkdir -p "$O/src"
SP="$O/node/node_modules/.bin/scip-python"
ST="$O/node/node_modules/.bin/scip-typescript"

declare -A REPO=(
  [requests]=psf/requests [flask]=pallets/flask [pylint]=pylint-dev/pylint
  [ky]=sindresorhus/ky [zod]=colinhacks/zod [bytes]=tokio-rs/bytes [fd]=sharkdp/fd
  [express]=expressjs/express [commander]=tj/commander.js
  [pflag]=spf13/pflag [toml]=BurntSushi/toml [mux]=gorilla/mux
  [gson]=google/gson [jsoup]=jhy/jsoup
  [cjson]=DaveGamble/cJSON [yamlcpp]=jbeder/yaml-cpp
)
declare -A COMMIT=(
  [requests]=1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e
  [flask]=2ac89889f4cc330eabd50f295dcef02828522c69
  [pylint]=3a99b2d728d0c8ff5267e0c38ebad4f5ba228dac
  [ky]=3419113b48e034fdcf8fa6bd3be3da7b3d0d758f
  [zod]=e516c3baf22615e20934116abebfed6c000222c2
  [bytes]=d5c8ad3227afe459c09f1d0d85455abf00f0381a
  [fd]=ee20f426ddf338ac7ead5c5f00ea49258005caaf
  [express]=dbac741a49a5a64336b70c06e85c2e2706e36336
  [commander]=ba6d13ddb4243e5913367734f8c159089ffe7834
  [pflag]=5fdac2d16c16d60605cb8baa887e8c5c38ef623f
  [toml]=d733fc535e4a9f3c454e421a87b90ade5d49bf31
  [mux]=db9d1d0073d27a0a2d9a8c1bc52aa0af4374d265
  [gson]=9835b6f90192f79cdf5300c528fc6212455fb6c1
  [jsoup]=46b620860af930eedc193a705eaf7cea5aec89a6
  [cjson]=a29814f285cc531c00223743ad3c55cd38c0dc56
  [yamlcpp]=c3f81127320662deb3e28f4da0a511f1faecd860
)
# The oracle's output file per project: a SCIP index, or the JSON of benches/oracles/.
out_of() { case $1 in pflag|toml|mux) echo "$O/$1.go.json" ;; gson|jsoup) echo "$O/$1.java.json" ;;
  cjson|yamlcpp) echo "$O/$1.clang.json" ;; *) echo "$O/$1.scip" ;; esac; }

tools() {
  [[ -x "$SP" && -x "$ST" ]] && return
  npm install --prefix "$O/node" --no-audit --no-fund --silent \
    @sourcegraph/scip-python@0.6.6 @sourcegraph/scip-typescript@0.4.0 >&2
  echo '[]' > "$O/empty-env.json"
}

checkout() { # name -> dir
  local n=$1 d="$O/src/$1" src
  if [[ ! -d "$d/.git" ]]; then
    if [[ -n "${EVAL_MIRRORS:-}" && -d "$EVAL_MIRRORS/${REPO[$n]/\//+}/repo" ]]; then
      src="$EVAL_MIRRORS/${REPO[$n]/\//+}/repo"
    else
      src="https://github.com/${REPO[$n]}"
    fi
    git clone -q "$src" "$d"
  fi
  git -C "$d" checkout -q --detach "${COMMIT[$n]}"
}

oracle() { # name -> prints the project dir; writes the oracle's output once
  local n=$1 d="$O/src/$1" proj="$O/src/$1"
  checkout "$n"
  [[ $n == zod ]] && proj="$d/packages/zod"
  [[ $n == gson ]] && proj="$d/gson"
  if [[ -s "$(out_of "$n")" ]]; then echo "$proj"; return; fi
  case $n in
    requests|flask|pylint)
      # The repository's own pyright settings would narrow what is indexed; src layouts are
      # put on the path so modules are named as they are imported.
      if [[ -d "$d/src" ]]; then echo '{"include": ["."], "extraPaths": ["src"]}' > "$d/pyrightconfig.json"
      else echo '{"include": ["."]}' > "$d/pyrightconfig.json"; fi
      (cd "$d" && NODE_OPTIONS=--max-old-space-size=8192 "$SP" index . --project-name "$n" \
         --environment "$O/empty-env.json" --output "$O/$n.scip" >&2) ;;
    ky)
      (cd "$d" && npm install --ignore-scripts --no-audit --no-fund --silent >&2 || true)
      printf '{"extends": "./tsconfig.json", "include": ["source", "test"]}\n' > "$d/tsconfig.scip.json"
      (cd "$d" && "$ST" index --no-progress-bar --output "$O/$n.scip" tsconfig.scip.json >&2) ;;
    zod)
      d="$proj"
      (cd "$d" && npm install --ignore-scripts --no-save --no-package-lock --no-audit --no-fund --silent \
         vitest@4.1.12 recheck@4.6.0-beta.3 >&2 || true)
      (cd "$d" && "$ST" index --no-progress-bar --output "$O/$n.scip" >&2) ;;
    express)
      # allowJs over the project's own folders (--infer-tsconfig would find node_modules'
      # .d.ts files and infer no allowJs); @types/node types the standard library's calls.
      (cd "$d" && npm install --ignore-scripts --no-save --no-package-lock --no-audit --no-fund --silent \
         @types/node@22.19.19 >&2 || true)
      printf '{"compilerOptions": {"allowJs": true, "noEmit": true}, "include": ["index.js", "lib", "test", "examples"]}\n' > "$d/tsconfig.scip.json"
      (cd "$d" && "$ST" index --no-progress-bar --output "$O/$n.scip" tsconfig.scip.json >&2) ;;
    commander)
      # The package imports itself by name: map that to the source the runtime loads.
      (cd "$d" && npm ci --ignore-scripts --no-audit --no-fund --silent >&2 || true)
      printf '{"extends": "./tsconfig.json", "compilerOptions": {"paths": {"commander": ["./index.js"]}}, "include": ["index.js", "lib", "tests", "examples"]}\n' > "$d/tsconfig.scip.json"
      (cd "$d" && "$ST" index --no-progress-bar --output "$O/$n.scip" tsconfig.scip.json >&2) ;;
    bytes|fd)
      (cd "$d" && rustup run stable rust-analyzer scip . --output "$O/$n.scip" >&2) ;;
    pflag|toml|mux)
      go run benches/oracles/go_oracle.go "$d" > "$O/$n.go.json" ;;
    gson|jsoup)
      java benches/oracles/JavaOracle.java "$proj" > "$O/$n.java.json" ;;
    cjson)
      # tests/unity is the vendored Unity framework (its examples collide).
      python3 benches/oracles/clang_oracle.py "$d" --exclude=tests/unity > "$O/$n.clang.json" ;;
    yamlcpp)
      python3 benches/oracles/clang_oracle.py "$d" > "$O/$n.clang.json" ;;
  esac
  echo "$proj"
}

names=("$@"); [[ ${#names[@]} -gt 0 ]] || names=(requests flask pylint ky zod express commander bytes fd pflag toml mux gson jsoup cjson yamlcpp)
tools
cargo build --release --quiet --bench graph_accuracy
BIN=$(ls -t "$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"/release/deps/graph_accuracy-* | grep -v '\.d$' | head -1)
for n in "${names[@]}"; do
  dir=$(oracle "$n")
  echo
  "$BIN" "$dir" "$(out_of "$n")" --json "$O/$n.accuracy.json"
done

# One summary row per project: precision of each provenance (edges scored), and recall over
# the oracle's call sites.
python3 - "$O" "${names[@]}" <<'PY'
import json, sys
o, names = sys.argv[1], sys.argv[2:]
lang = {"requests": "Python", "flask": "Python", "pylint": "Python", "ky": "TypeScript",
        "zod": "TypeScript", "express": "JavaScript", "commander": "JavaScript", "bytes": "Rust",
        "fd": "Rust", "pflag": "Go", "toml": "Go", "mux": "Go", "gson": "Java", "jsoup": "Java",
        "cjson": "C", "yamlcpp": "C++"}
def p(t):
    return f"{100*t['correct']/t['edges']:.1f}% ({t['edges']})" if t and t["edges"] else "-"
print()
print("| project | language | call sites scored | import | qualified | receiver | scope | all rule edges | name-unique | name-ambiguous | recall: rules | + name-unique | + ambiguous |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for n in names:
    r = json.load(open(f"{o}/{n}.accuracy.json"))
    b = r["by_provenance"]
    rules = {"edges": 0, "correct": 0}
    for k in ("import", "qualified", "receiver", "scope"):
        if k in b:
            rules["edges"] += b[k]["edges"]; rules["correct"] += b[k]["correct"]
    sites = r["oracle_call_sites"]
    rec = lambda k: f"{100*r[k]/sites:.1f}%" if sites else "-"
    print(f"| {n} | {lang.get(n, '?')} | {r['call_sites_with_oracle']:,} | {p(b.get('import'))} | {p(b.get('qualified'))} | "
          f"{p(b.get('receiver'))} | {p(b.get('scope'))} | {p(rules)} | {p(b.get('name-unique'))} | "
          f"{p(b.get('name-ambiguous'))} | {rec('recall_rules')} | {rec('recall_rules_and_unique')} | {rec('recall_any')} |")
PY
