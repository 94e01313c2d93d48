#!/usr/bin/env bash
# Builds cloud-provider-aws's own route code (testenv/aws-upstream: k8s.io/cloud-provider-aws's
# Routes interface behind a small command line, run against moto by the aws handover test) and
# caches the binary outside the repository, keyed by a hash of the module's sources and the Go
# version, like scripts/gce-fake.sh does for the GCE fake.
#
#   scripts/aws-upstream.sh build   build (or reuse) the binary; prints AWS_UPSTREAM=<path>
#   scripts/aws-upstream.sh path    print AWS_UPSTREAM=<path> (empty if not built)
#
# Environment: XDG_CACHE_HOME (cache root, default ~/.cache), AWS_UPSTREAM_BUILD_TIMEOUT (s, default 1200).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/testenv/aws-upstream"
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0

log() { printf '[aws-upstream %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

command -v go > /dev/null 2>&1 || die "go is not installed (need Go 1.26.x, GOTOOLCHAIN=local)"
CACHE_BASE="${XDG_CACHE_HOME:-$HOME/.cache}/cloud-route-controller/testenv"
# The key changes with any source, go.mod or go.sum edit and with the toolchain.
KEY="$(cd "$SRC" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-16)"
DIR="$CACHE_BASE/aws-upstream-$KEY-$(go env GOVERSION)-$(go env GOOS)-$(go env GOARCH)"
BIN="$DIR/aws-upstream"

cmd_path() {
  if [[ -x "$BIN" ]]; then echo "AWS_UPSTREAM=$BIN"; else echo "AWS_UPSTREAM="; fi
}

cmd_build() {
  if [[ -x "$BIN" ]] && "$BIN" -version > /dev/null 2>&1; then
    log "cache hit $BIN"
    cmd_path
    return 0
  fi
  mkdir -p "$DIR"
  exec 9> "$DIR.lock"
  flock -w 1200 9 || die "timed out waiting for $DIR.lock"
  if [[ -x "$BIN" ]]; then
    log "cache hit $BIN (built by a concurrent run)"
    cmd_path
    return 0
  fi
  log "cache miss, building with $(go env GOVERSION) into $DIR"
  local start=$SECONDS
  rm -f "$BIN.tmp"
  if ! (cd "$SRC" && timeout "${AWS_UPSTREAM_BUILD_TIMEOUT:-1200}" \
    go build -mod=readonly -trimpath -ldflags "-s -w" -o "$BIN.tmp" .); then
    rm -f "$BIN.tmp"
    die "build failed (exact go error above)"
  fi
  "$BIN.tmp" -version > /dev/null || die "built binary does not run"
  mv -f "$BIN.tmp" "$BIN"
  log "built $BIN in $((SECONDS - start)) s ($(du -h "$BIN" | cut -f1))"
  cmd_path
}

case "${1:-}" in
  build) cmd_build ;;
  path) cmd_path ;;
  -h | --help)
    echo "usage: $0 build|path"
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
    ;;
  *)
    echo "error: unknown command '${1:-}' (usage: $0 build|path)" >&2
    exit 2
    ;;
esac
