#!/usr/bin/env bash
# Builds the upstream route-controller peer (bench/upstream, k8s.io/cloud-provider v0.37.2) and
# caches the binary outside the repository. Skips the build when the binary is present.
#
#   scripts/bench-build-upstream.sh          build (or reuse); prints the binary path on stdout
#   scripts/bench-build-upstream.sh --path   print the binary path only
#
# Environment: XDG_CACHE_HOME (cache root, default ~/.cache), BENCH_BUILD_TIMEOUT (seconds, 1800),
# BENCH_LOCK_TIMEOUT (seconds to wait for the build lock, 3600).
set -euo pipefail

VERSION=v0.37.2
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/bench/upstream"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/cloud-route-controller/bench"
BIN="$CACHE/upstream-route-$VERSION"

export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0

log() { printf '[bench-build %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

case "${1:-}" in
  "" | --path) ;;
  -h | --help)
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
    exit 0
    ;;
  *)
    echo "error: unknown argument '$1' (usage: $0 [--path])" >&2
    exit 2
    ;;
esac
if [[ "${1:-}" == "--path" ]]; then
  echo "$BIN"
  exit 0
fi

mkdir -p "$CACHE"
if [[ -x "$BIN" ]]; then
  log "cache hit: $BIN"
  echo "$BIN"
  exit 0
fi

command -v go > /dev/null 2>&1 || {
  log "ERROR: go not found (Go 1.26 needed)"
  exit 1
}

# One build at a time, across processes (the machine has 2 shared cores).
exec 9> "$CACHE/.build.lock"
if ! flock -w "${BENCH_LOCK_TIMEOUT:-3600}" 9; then
  log "ERROR: timed out waiting for $CACHE/.build.lock"
  exit 1
fi
if [[ -x "$BIN" ]]; then
  log "cache hit after waiting for the lock: $BIN"
  echo "$BIN"
  exit 0
fi

log "cache miss: building $BIN with $(go env GOVERSION)"
start=$(date +%s)
tmp="$BIN.tmp.$$"
(
  cd "$SRC"
  timeout "${BENCH_BUILD_TIMEOUT:-1800}" go build -mod=readonly -trimpath -o "$tmp" .
)
mv -f "$tmp" "$BIN"
log "built in $(($(date +%s) - start)) s: $BIN"
echo "$BIN"
