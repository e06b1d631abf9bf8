#!/usr/bin/env bash
# Checks the Kubernetes manifests in deploy/k8s: the built-in kinds against the Kubernetes
# API schemas (kubernetes-validate, strict: unknown fields fail), the KEDA ScaledObject
# against KEDA's CRD schema (@kubernetes-models/keda on Node). Then proves the check bites:
# a StatefulSet and a ScaledObject with a field of the wrong type must each fail.
# Tools pinned in .ci/k8s-schemas (requirements.txt, package-lock.json), cached.
# Usage: .ci/check_manifests.sh [CACHE_DIR]    (default $HOME/.cache/kenning-k8s)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
PINS="$HERE/k8s-schemas"
CACHE="${1:-$HOME/.cache/kenning-k8s}"
mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"
PYTHON="${PYTHON:-python3}"
want="$("$PYTHON" -c 'import sys; print(sys.version.split()[0])') $(cat "$PINS/requirements.txt" "$PINS/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [[ "$(cat "$CACHE/.stamp" 2>/dev/null)" != "$want" ]]; then
  echo "check_manifests: installing kubernetes-validate and the KEDA schemas" >&2
  rm -rf "$CACHE/venv" "$CACHE/node"
  "$PYTHON" -m venv "$CACHE/venv"
  "$CACHE/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --only-binary=:all: -r "$PINS/requirements.txt" >&2
  mkdir -p "$CACHE/node"
  cp "$PINS/package.json" "$PINS/package-lock.json" "$CACHE/node/"
  (cd "$CACHE/node" && npm ci --silent --no-audit --no-fund >&2)
  echo "$want" > "$CACHE/.stamp"
fi
cp "$PINS/validate_crds.mjs" "$CACHE/node/"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

check() { # DIR: every manifest in it
  local dir="$1" ok=0
  "$CACHE/venv/bin/kubernetes-validate" --strict --quiet "$dir"/*.yaml >&2 || ok=1
  for f in "$dir"/*.yaml; do
    "$CACHE/venv/bin/python" -c 'import json,sys,yaml; json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], open(sys.argv[2], "w"))' \
      "$f" "$WORK/$(basename "$f").json"
  done
  node "$CACHE/node/validate_crds.mjs" "$WORK"/*.json || ok=1
  rm -f "$WORK"/*.json
  return $ok
}

check "$ROOT/deploy/k8s"
echo "check_manifests: deploy/k8s is valid" >&2

# The check must fail on broken manifests.
mkdir -p "$WORK/bad1" "$WORK/bad2"
cp "$ROOT"/deploy/k8s/*.yaml "$WORK/bad1/"
sed -i 's/^  replicas: 3$/  replicas: three/' "$WORK/bad1/nats.yaml"
cp "$ROOT"/deploy/k8s/*.yaml "$WORK/bad2/"
sed -i 's/^  minReplicaCount: 1$/  minReplicaCount: one/' "$WORK/bad2/keda.yaml"
for bad in bad1 bad2; do
  if check "$WORK/$bad" 2>/dev/null; then
    echo "check_manifests: a broken manifest ($bad) passed the check" >&2
    exit 1
  fi
done
echo "check_manifests: broken manifests are refused" >&2
