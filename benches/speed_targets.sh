#!/usr/bin/env bash
# The speed and memory figures of one tree, for one `ken` or for two side by side:
#
#   benches/speed_targets.sh PARSE_FLOOR TREE KEN [BASE_KEN]
#
# PARSE_FLOOR is a release `examples/parse_floor`; TREE a source tree (it gets a .kenning
# folder, and one of its files is edited and restored); KEN a release `ken`, BASE_KEN an
# optional second one measured in turn with it (A B A B ...), so the ratios hold on a machine
# whose speed drifts. Per binary, medians of RUNS (default 3) runs on ${KEN_THREADS:-2} threads:
#   - the bare parse, a full default build (seconds, peak RSS, MiB per million lines);
#   - a one-file change made queryable: an edit inside a function body, and a line inserted
#     at the top of the file (everything below it moves), each a `ken index build`;
#   - cold one-shot `ken search` and `ken context` (median of 5 processes each), with the peak
#     RSS of one.
set -euo pipefail
FLOOR=${1:?usage: speed_targets.sh PARSE_FLOOR TREE KEN [BASE_KEN]}
TREE=${2:?usage: speed_targets.sh PARSE_FLOOR TREE KEN [BASE_KEN]}
shift 2
BINS=("$@")
[ ${#BINS[@]} -ge 1 ] || { echo "usage: speed_targets.sh PARSE_FLOOR TREE KEN [BASE_KEN]" >&2; exit 2; }
RUNS=${RUNS:-3}
THREADS=${KEN_THREADS:-2}
export RAYON_NUM_THREADS=$THREADS
TMP=$(mktemp -d)
VICTIM=""
trap 'rm -rf "$TMP"; [ -f "$TMP.orig" ] && mv "$TMP.orig" "$VICTIM"' EXIT
Q="parse the configuration file and report an error for unknown keys"

measure() { # CMD... -> "seconds peak_mib"
  local t; t=$(mktemp)
  /usr/bin/time -f "%e %M" -o "$t" "$@" >/dev/null 2>&1 || true
  awk 'END {printf "%s %.0f\n", $1, $2/1024}' "$t"; rm -f "$t"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# The edited file: the first Python (else any) source over 4 KiB with a function body.
VICTIM=$(cd "$TREE" && { find . -name '*.py' -size +4k; find . -name '*.rs' -size +4k; } | sort | sed -n 1p)
VICTIM="$TREE/${VICTIM#./}"
cp -p "$VICTIM" "$TMP.orig"
BODY_LINE=$(grep -n '^\s\+return\b\|^\s\+let \|^\s\+[a-z_]\+ = ' "$VICTIM" | sed -n 1p | cut -d: -f1)
BODY_LINE=${BODY_LINE:-2}

for run in $(seq "$RUNS"); do
  start=$(date +%s%N); "$FLOOR" "$TREE" "$THREADS" >/dev/null 2>&1
  echo "floor $(( ($(date +%s%N) - start) / 1000000 ))" >>"$TMP/all"
  for i in "${!BINS[@]}"; do
    ken=${BINS[$i]}
    idx="$TMP/idx$i"
    rm -rf "$idx"
    read -r secs peak < <(measure "$ken" -q index build --full --threads "$THREADS" --index-dir "$idx" "$TREE")
    echo "$i build $secs $peak" >>"$TMP/all"
    lines=$(python3 -c 'import glob,json,sys; m=json.load(open(sorted(glob.glob(sys.argv[1]+"/gen-*/manifest.json"))[-1])); print(m["summary"]["lines"])' "$idx")
    echo "$i lines $lines" >>"$TMP/all"
    # An edit inside a function body: one line's text changes, nothing moves.
    sed -i "${BODY_LINE}s/\$/  # edited/" "$VICTIM"
    read -r secs _ < <(measure "$ken" -q index build --threads "$THREADS" --index-dir "$idx" "$TREE")
    echo "$i body $secs" >>"$TMP/all"
    cp -p "$TMP.orig" "$VICTIM"; "$ken" -q index build --threads "$THREADS" --index-dir "$idx" "$TREE" >/dev/null 2>&1
    # A line inserted at the top: everything below it moves.
    { echo "# inserted line"; cat "$TMP.orig"; } >"$VICTIM"
    read -r secs _ < <(measure "$ken" -q index build --threads "$THREADS" --index-dir "$idx" "$TREE")
    echo "$i top $secs" >>"$TMP/all"
    cp -p "$TMP.orig" "$VICTIM"; "$ken" -q index build --threads "$THREADS" --index-dir "$idx" "$TREE" >/dev/null 2>&1
    for _ in 1 2 3 4 5; do
      read -r s p < <(measure "$ken" search "$Q" --repo "$TREE" --index-dir "$idx" -q); echo "$i search $s $p" >>"$TMP/all"
      read -r s p < <(measure "$ken" context "$Q" --repo "$TREE" --index-dir "$idx" -q); echo "$i context $s $p" >>"$TMP/all"
    done
  done
done

python3 - "$TMP/all" "${BINS[@]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
bins = sys.argv[2:]
floor = statistics.median(float(r[1]) / 1000 for r in rows if r[0] == "floor")
def med(i, kind, col=2):
    v = [float(r[col]) for r in rows if r[0] == str(i) and r[1] == kind]
    return statistics.median(v) if v else float("nan")
print(f"bare parse: {floor:.2f} s")
print("| ken | lines | full build | vs parse | build peak MiB | MiB per M lines | body edit | top insert | cold search | search MiB | cold context | context MiB |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for i, b in enumerate(bins):
    lines = med(i, "lines")
    build, peak = med(i, "build"), med(i, "build", 3)
    print(f"| {b} | {int(lines):,} | {build:.2f} s | {build/floor:.2f}x | {peak:.0f} | {peak/(lines/1e6):.0f} | "
          f"{med(i,'body'):.2f} s | {med(i,'top'):.2f} s | {med(i,'search')*1000:.0f} ms | {med(i,'search',3):.0f} | "
          f"{med(i,'context')*1000:.0f} ms | {med(i,'context',3):.0f} |")
PY
