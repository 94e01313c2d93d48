#!/usr/bin/env bash
# Installs moto (the EC2 emulator the aws integration tests run against) into a
# cached venv keyed by version, so a machine pays for the install once.
#
#   scripts/moto.sh          install if missing (logs cache hit/miss and time)
#   scripts/moto.sh path     print the moto_server path (exit 1 if not installed)
#
# MOTO_VENV overrides the venv location.
set -euo pipefail

MOTO_VERSION=5.2.5
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/cloud-route-controller"
VENV="${MOTO_VENV:-$CACHE_ROOT/moto-$MOTO_VERSION}"
SERVER="$VENV/bin/moto_server"
# Written last: a venv interrupted mid-install must not count as a cache hit.
STAMP="$VENV/.installed"

log() { echo "moto.sh: $*" >&2; }

installed() { [[ -f "$STAMP" && -x "$SERVER" ]]; }

cmd_path() {
  if installed; then
    echo "$SERVER"
  else
    log "moto $MOTO_VERSION is not installed at $VENV (run scripts/moto.sh)"
    return 1
  fi
}

cmd_install() {
  if installed; then
    log "cache hit: moto $MOTO_VERSION at $VENV"
    return 0
  fi
  mkdir -p "$(dirname "$VENV")"
  # Two CI stages or developers installing at once would corrupt one venv.
  exec 9>"$VENV.lock"
  flock 9
  if installed; then
    log "cache hit: moto $MOTO_VERSION at $VENV (installed by a concurrent run)"
    return 0
  fi
  log "cache miss: installing moto $MOTO_VERSION into $VENV"
  local start=$SECONDS
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet 'moto[server]=='"$MOTO_VERSION"
  touch "$STAMP"
  log "installed moto $MOTO_VERSION in $((SECONDS - start))s"
}

case "${1:-install}" in
  install) cmd_install ;;
  path) cmd_path ;;
  -h | --help)
    echo "usage: $0 [install|path]"
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
    ;;
  *)
    echo "error: unknown command '${1:-}' (usage: $0 [install|path])" >&2
    exit 2
    ;;
esac
