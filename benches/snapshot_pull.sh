#!/usr/bin/env bash
# `ken index pull` of a published snapshot against a full local build of the same checkout,
# through a real S3-compatible server (moto) in a network namespace with only loopback:
#
#   benches/snapshot_pull.sh REPO [NAME]      (REPO: a git checkout; NAME: its snapshot key)
#
# Measures, with the release `ken`: a full `ken index build` of a fresh clone; the first push
# (objects and bytes sent); a second push of the same generation; a pull into another fresh
# clone (download, verification, commit and the incremental update, and the bytes moved); that
# both clones answer `ken search` and `ken context` alike; and a pull into a clone one commit
# ahead of the snapshot (a changed file). moto_server: KEN_S3_SERVER, else on PATH
# (.ci/install_s3_server.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(cd "$1" && pwd)
NAME=${2:-bench/$(basename "$REPO")}
MOTO=${KEN_S3_SERVER:-$(command -v moto_server)}
cargo build --release --quiet --bin ken
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
KEN="$TARGET_DIR/release/ken"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export KEN REPO NAME MOTO WORK
unshare --user --map-root-user --net bash ${KEN_BENCH_TRACE:+-x} <<'INNER'
set -euo pipefail
PATH="$PATH:/usr/sbin:/sbin" ip link set lo up
"$MOTO" -H 127.0.0.1 -p 45124 > "$WORK/moto.log" 2>&1 &
trap 'kill %1 2>/dev/null || true' EXIT
for i in $(seq 300); do curl -s -o /dev/null http://127.0.0.1:45124/ && break; sleep 0.1; done
curl -sf -X PUT http://127.0.0.1:45124/bench > /dev/null
export AWS_ENDPOINT=http://127.0.0.1:45124 AWS_ALLOW_HTTP=true AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
REMOTE=s3://bench/indexes
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b-a}'; }
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [d:=d[k] for k in sys.argv[2].split(".")]; print(d)' "$1" "$2"; }
git clone -q "$REPO" "$WORK/a"; git clone -q "$REPO" "$WORK/b"; git clone -q "$REPO" "$WORK/c"
t=$(now); "$KEN" -q index build "$WORK/a" > /dev/null; build=$(secs "$t" "$(now)")
lines=$("$KEN" index status "$WORK/a" 2>/dev/null | sed -n 2p | awk '{print $3}')
t=$(now); "$KEN" -q index push "$WORK/a" --remote $REMOTE --name "$NAME" --json > "$WORK/push1.json"; push1=$(secs "$t" "$(now)")
t=$(now); "$KEN" -q index push "$WORK/a" --remote $REMOTE --name "$NAME" --json > "$WORK/push2.json"; push2=$(secs "$t" "$(now)")
t=$(now); "$KEN" -q index pull "$WORK/b" --remote $REMOTE --name "$NAME" --json > "$WORK/pull.json"; pull=$(secs "$t" "$(now)")
q="parse the configuration file and report an error for unknown keys"
same=yes
for cmd in search context; do
  fmt=$([ $cmd = search ] && echo --json || echo --format=json)
  "$KEN" $cmd "$q" --repo "$WORK/a" -q $fmt 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps(d.get("files")))' > "$WORK/a.$cmd"
  "$KEN" $cmd "$q" --repo "$WORK/b" -q $fmt 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps(d.get("files")))' > "$WORK/b.$cmd"
  cmp -s "$WORK/a.$cmd" "$WORK/b.$cmd" || same=no
done
victim=$(cd "$WORK/c" && git ls-files '*.py' | sed -n 1p)
echo "def snapshot_bench_added(): pass" >> "$WORK/c/$victim"
git -C "$WORK/c" -c user.name=b -c user.email=b@b commit -qam "one change"
t=$(now); "$KEN" -q index pull "$WORK/c" --remote $REMOTE --name "$NAME" --json > "$WORK/pull-ahead.json"; ahead=$(secs "$t" "$(now)")
mib() { awk -v b="$1" 'BEGIN {printf "%.1f", b/1048576}'; }
echo "| lines | full build | push (sent) | push again (sent) | pull + update | pulled | update parsed | answers equal | pull, 1 commit ahead | its update parsed |"
echo "|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"
echo "| $lines | ${build} s | ${push1} s ($(mib "$(field "$WORK/push1.json" uploaded_bytes)") MiB, $(field "$WORK/push1.json" uploaded) objects) | ${push2} s ($(field "$WORK/push2.json" uploaded) objects) | ${pull} s | $(mib "$(field "$WORK/pull.json" pull.bytes)") MiB, $(field "$WORK/pull.json" pull.objects) files | $(field "$WORK/pull.json" update.manifest.stats.parsed) | $same | ${ahead} s (behind $(field "$WORK/pull-ahead.json" pull.behind)) | $(field "$WORK/pull-ahead.json" update.manifest.stats.parsed) |"
INNER
