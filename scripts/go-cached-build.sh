# Sourced by the scripts that build a small Go module of testenv/ into a cache outside the
# repository (aws-upstream.sh, azure-fake.sh, gce-fake.sh, gce-upstream.sh), in the manner of
# suite-args.sh. `go_cached_build NAME VAR "$@"` is such a script's whole command line:
#
#   build       build testenv/NAME (or reuse the cached binary); prints VAR=<path>
#   path        print VAR=<path> (VAR= if not built)
#   -h, --help  the calling script's header comment; anything else is one error line and exit 2
#
# The binary is ${XDG_CACHE_HOME:-$HOME/.cache}/cloud-route-controller/testenv/
# NAME-<hash of go.mod, go.sum and *.go>-<go version>-<os>-<arch>/NAME, so any source edit or
# another toolchain builds afresh. Builds are -mod=readonly (go.sum pins every module), serialized
# by a lock beside the directory, written to NAME.tmp and moved into place only after the binary
# answers -version, so a failed or concurrent build never leaves a broken cache hit. The time
# limit is ${VAR}_BUILD_TIMEOUT seconds (default 1200).

_gcb_log() { printf '[%s %s] %s\n' "$_GCB_NAME" "$(date +%H:%M:%S)" "$*" >&2; }
_gcb_die() {
  _gcb_log "ERROR: $*"
  exit 1
}

# Sets _GCB_DIR and _GCB_BIN; needs go, so --help and a bad argument do not.
_gcb_locate() {
  export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0
  command -v go > /dev/null 2>&1 || _gcb_die "go is not installed (need Go 1.26.x, GOTOOLCHAIN=local)"
  local root src key
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  src="$root/testenv/$_GCB_NAME"
  _GCB_SRC="$src"
  key="$(cd "$src" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-16)"
  _GCB_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/cloud-route-controller/testenv/$_GCB_NAME-$key-$(go env GOVERSION)-$(go env GOOS)-$(go env GOARCH)"
  _GCB_BIN="$_GCB_DIR/$_GCB_NAME"
}

_gcb_path() {
  if [[ -x "$_GCB_BIN" ]]; then echo "$_GCB_VAR=$_GCB_BIN"; else echo "$_GCB_VAR="; fi
}

_gcb_build() {
  if [[ -x "$_GCB_BIN" ]] && "$_GCB_BIN" -version > /dev/null 2>&1; then
    _gcb_log "cache hit $_GCB_BIN"
    _gcb_path
    return 0
  fi
  mkdir -p "$_GCB_DIR"
  exec 9> "$_GCB_DIR.lock"
  flock -w 1200 9 || _gcb_die "timed out waiting for $_GCB_DIR.lock"
  if [[ -x "$_GCB_BIN" ]]; then
    _gcb_log "cache hit $_GCB_BIN (built by a concurrent run)"
    _gcb_path
    return 0
  fi
  _gcb_log "cache miss, building with $(go env GOVERSION) into $_GCB_DIR"
  local start=$SECONDS timeout_var="${_GCB_VAR}_BUILD_TIMEOUT"
  rm -f "$_GCB_BIN.tmp"
  if ! (cd "$_GCB_SRC" && timeout "${!timeout_var:-1200}" \
    go build -mod=readonly -trimpath -ldflags "-s -w" -o "$_GCB_BIN.tmp" .); then
    rm -f "$_GCB_BIN.tmp"
    _gcb_die "build failed (exact go error above)"
  fi
  "$_GCB_BIN.tmp" -version > /dev/null || _gcb_die "built binary does not run"
  mv -f "$_GCB_BIN.tmp" "$_GCB_BIN"
  _gcb_log "built $_GCB_BIN in $((SECONDS - start)) s ($(du -h "$_GCB_BIN" | cut -f1))"
  _gcb_path
}

# go_cached_build NAME VAR ARGS...: NAME is the module's directory under testenv/ and the
# binary's name, VAR the variable the paths are printed as.
go_cached_build() {
  _GCB_NAME=$1
  _GCB_VAR=$2
  shift 2
  case "${1:-}" in
    build)
      _gcb_locate
      _gcb_build
      ;;
    path)
      _gcb_locate
      _gcb_path
      ;;
    -h | --help)
      echo "usage: $0 build|path"
      sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
      ;;
    *)
      echo "error: unknown command '${1:-}' (usage: $0 build|path)" >&2
      exit 2
      ;;
  esac
}
