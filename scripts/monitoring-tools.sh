#!/usr/bin/env bash
# Tools for the chart and monitoring suite (test/monitoring): helm, kustomize and promtool built
# from the Go module proxy, and the Prometheus operator's CRDs taken from its module download. Cached outside
# the repository, keyed by version, like scripts/testenv.sh.
#
#   scripts/monitoring-tools.sh build   build (or reuse) helm, kustomize, promtool; fetch the CRDs
#   scripts/monitoring-tools.sh paths   print HELM=, KUSTOMIZE=, PROMTOOL=, PROMETHEUS_OPERATOR_CRDS=
#
# Environment knobs: XDG_CACHE_HOME (cache root, default ~/.cache), TOOLS_BUILD_TIMEOUT (seconds
# per Go build, default 2400).
set -euo pipefail

HELM_MODULE=helm.sh/helm/v4
HELM_VERSION=v4.3.2
KUSTOMIZE_MODULE=sigs.k8s.io/kustomize/kustomize/v5
# v5.8.3 requires Go 1.27.
KUSTOMIZE_VERSION=v5.8.2
PROMETHEUS_MODULE=github.com/prometheus/prometheus
# Go module v0.316.0 is Prometheus 3.16.0 (the module drops the major version).
PROMETHEUS_VERSION=v0.316.0
# The newest version of the operator's main module the proxy serves; its example/ directory holds
# the CRDs exactly as the operator's bundle ships them.
OPERATOR_MODULE=github.com/prometheus-operator/prometheus-operator
OPERATOR_VERSION=v0.85.0

export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0

log() { printf '[monitoring-tools %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

command -v go > /dev/null 2>&1 || die "go is not installed"
GOVER="$(go env GOVERSION)"
PLATFORM="$(go env GOOS)-$(go env GOARCH)"
CACHE_BASE="${XDG_CACHE_HOME:-$HOME/.cache}/cloud-route-controller/tools"
HELM_DIR="$CACHE_BASE/helm-$HELM_VERSION-$GOVER-$PLATFORM"
KUSTOMIZE_DIR="$CACHE_BASE/kustomize-$KUSTOMIZE_VERSION-$GOVER-$PLATFORM"
PROMTOOL_DIR="$CACHE_BASE/promtool-$PROMETHEUS_VERSION-nosd-$GOVER-$PLATFORM"
CRD_DIR="$CACHE_BASE/prometheus-operator-crds-$OPERATOR_VERSION"

# go_install NAME DIR PKG@VERSION [TAGS]: go install into DIR with timing (and peak RSS if GNU
# time exists).
go_install() {
  local name="$1" dir="$2" pkg="$3" tags="${4:-}" start rc=0
  mkdir -p "$dir.tmp"
  start=$(date +%s)
  if [[ -x /usr/bin/time ]]; then
    GOBIN="$dir.tmp" /usr/bin/time -v -o "$dir.tmp/build-time.txt" \
      timeout "${TOOLS_BUILD_TIMEOUT:-2400}" go install -trimpath -tags="$tags" -ldflags "-s -w" "$pkg" || rc=$?
  else
    GOBIN="$dir.tmp" timeout "${TOOLS_BUILD_TIMEOUT:-2400}" go install -trimpath -tags="$tags" -ldflags "-s -w" "$pkg" || rc=$?
  fi
  local rss=""
  [[ -f "$dir.tmp/build-time.txt" ]] &&
    rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f MiB", $2/1024}' "$dir.tmp/build-time.txt")
  log "$name: build took $(($(date +%s) - start)) s (rc=$rc, peak RSS ${rss:-?})"
  [[ $rc -eq 0 ]] || {
    rm -rf "$dir.tmp"
    die "$name: go install $pkg failed (exact go error above)"
  }
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
}

build_helm() {
  # `go version -m` reads the module version from the binary's build info.
  if [[ -x "$HELM_DIR/helm" ]] && go version -m "$HELM_DIR/helm" | grep -q "mod[[:space:]]*$HELM_MODULE[[:space:]]*$HELM_VERSION"; then
    log "helm: cache hit $HELM_DIR/helm"
    return 0
  fi
  log "helm: cache miss, building $HELM_MODULE@$HELM_VERSION"
  go_install helm "$HELM_DIR" "$HELM_MODULE/cmd/helm@$HELM_VERSION"
  log "helm: $("$HELM_DIR/helm" version --short)"
}

build_promtool() {
  if [[ -x "$PROMTOOL_DIR/promtool" ]]; then
    log "promtool: cache hit $PROMTOOL_DIR/promtool"
    return 0
  fi
  log "promtool: cache miss, building $PROMETHEUS_MODULE/cmd/promtool@$PROMETHEUS_VERSION"
  # remove_all_sd leaves out the service-discovery plugins (AWS, Azure, GCE, Kubernetes, ...):
  # rule checks and rule unit tests need none, and they are most of the build.
  go_install promtool "$PROMTOOL_DIR" "$PROMETHEUS_MODULE/cmd/promtool@$PROMETHEUS_VERSION" remove_all_sd
}

build_kustomize() {
  if [[ -x "$KUSTOMIZE_DIR/kustomize" ]]; then
    log "kustomize: cache hit $KUSTOMIZE_DIR/kustomize"
    return 0
  fi
  log "kustomize: cache miss, building $KUSTOMIZE_MODULE@$KUSTOMIZE_VERSION"
  go_install kustomize "$KUSTOMIZE_DIR" "$KUSTOMIZE_MODULE@$KUSTOMIZE_VERSION"
}

fetch_crds() {
  if [[ -s "$CRD_DIR/monitoring.coreos.com_servicemonitors.yaml" && -s "$CRD_DIR/monitoring.coreos.com_prometheusrules.yaml" ]]; then
    log "operator CRDs: cache hit $CRD_DIR"
    return 0
  fi
  local src
  src="$(go mod download -json "$OPERATOR_MODULE@$OPERATOR_VERSION" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')" || die "go mod download $OPERATOR_MODULE@$OPERATOR_VERSION failed"
  rm -rf "$CRD_DIR.tmp"
  mkdir -p "$CRD_DIR.tmp"
  # Only the two kinds the chart renders: the apiserver then knows them, nothing else is installed.
  cp "$src/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" \
    "$src/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml" "$CRD_DIR.tmp/"
  chmod u+w "$CRD_DIR.tmp"/*
  rm -rf "$CRD_DIR"
  mv "$CRD_DIR.tmp" "$CRD_DIR"
  log "operator CRDs: $CRD_DIR (from $OPERATOR_MODULE@$OPERATOR_VERSION)"
}

print_paths() {
  echo "HELM=$([[ -x "$HELM_DIR/helm" ]] && echo "$HELM_DIR/helm")"
  echo "KUSTOMIZE=$([[ -x "$KUSTOMIZE_DIR/kustomize" ]] && echo "$KUSTOMIZE_DIR/kustomize")"
  echo "PROMTOOL=$([[ -x "$PROMTOOL_DIR/promtool" ]] && echo "$PROMTOOL_DIR/promtool")"
  echo "PROMETHEUS_OPERATOR_CRDS=$([[ -d "$CRD_DIR" ]] && echo "$CRD_DIR")"
}

do_build() {
  mkdir -p "$CACHE_BASE"
  exec 9> "$CACHE_BASE/.build.lock"
  flock -w 3600 9 || die "timed out waiting for $CACHE_BASE/.build.lock"
  local start=$SECONDS
  fetch_crds
  # One Go build at a time (2 cores).
  build_promtool
  build_helm
  build_kustomize
  log "build done in $((SECONDS - start)) s"
  print_paths
}

case "${1:-}" in
  build) do_build ;;
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
