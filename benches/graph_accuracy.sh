#!/usr/bin/env bash
# Accuracy of the code graph's call edges against independent oracles (SCIP indexes):
#   Python      scip-python 0.6.6 (pyright)      on requests, flask, pylint
#   TypeScript  scip-typescript 0.4.0 (tsc)      on ky, zod (packages/zod)
#   Rust        rust-analyzer (rustup component)  on bytes, fd
# Each project is checked out at a pinned commit, indexed by its oracle, then scored by
# benches/graph_accuracy.rs (precision per provenance, recall over the oracle's call sites).
#
#   benches/graph_accuracy.sh [name...]      names: requests flask pylint ky zod bytes fd
#
# Work folder: ${KEN_ORACLE:-/tmp/ken-oracle}. Sources come from bare mirrors under
# ${EVAL_MIRRORS} when set (<owner>+<name>/repo), else from GitHub. Needs node>=20 + npm, git,
# and `rustup component add rust-analyzer` for the Rust oracle (it runs `cargo metadata`).
set -euo pipefail
cd "$(dirname "$0")/.."
O=${KEN_ORACLE:-/tmp/ken-oracle}
mkdir -p "$O/src"
SP="$O/node/node_modules/.bin/scip-python"
ST="$O/node/node_modules/.bin/scip-typescript"

declare -A REPO=(
  [requests]=psf/requests [flask]=pallets/flask [pylint]=pylint-dev/pylint
  [ky]=sindresorhus/ky [zod]=colinhacks/zod [bytes]=tokio-rs/bytes [fd]=sharkdp/fd
)
declare -A COMMIT=(
  [requests]=1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e
  [flask]=2ac89889f4cc330eabd50f295dcef02828522c69
  [pylint]=3a99b2d728d0c8ff5267e0c38ebad4f5ba228dac
  [ky]=3419113b48e034fdcf8fa6bd3be3da7b3d0d758f
  [zod]=e516c3baf22615e20934116abebfed6c000222c2
  [bytes]=d5c8ad3227afe459c09f1d0d85455abf00f0381a
  [fd]=ee20f426ddf338ac7ead5c5f00ea49258005caaf
)

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

oracle() { # name -> prints the project dir; writes $O/<name>.scip once
  local n=$1 d="$O/src/$1" proj="$O/src/$1"
  checkout "$n"
  [[ $n == zod ]] && proj="$d/packages/zod"
  if [[ -s "$O/$n.scip" ]]; then echo "$proj"; return; fi
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
    bytes|fd)
      (cd "$d" && rustup run stable rust-analyzer scip . --output "$O/$n.scip" >&2) ;;
  esac
  echo "$proj"
}

names=("$@"); [[ ${#names[@]} -gt 0 ]] || names=(requests flask pylint ky zod bytes fd)
tools
cargo build --release --quiet --bench graph_accuracy
BIN=$(ls -t "$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"/release/deps/graph_accuracy-* | grep -v '\.d$' | head -1)
for n in "${names[@]}"; do
  dir=$(oracle "$n")
  echo
  "$BIN" "$dir" "$O/$n.scip" --json "$O/$n.accuracy.json"
done

# One summary row per project: precision of each provenance (edges scored), and recall over
# the oracle's call sites.
python3 - "$O" "${names[@]}" <<'PY'
import json, sys
o, names = sys.argv[1], sys.argv[2:]
lang = {"requests": "Python", "flask": "Python", "pylint": "Python", "ky": "TypeScript",
        "zod": "TypeScript", "bytes": "Rust", "fd": "Rust"}
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
