#!/usr/bin/env bash
# Installs neutron-server (PyPI `neutron`, pinned with testenv/neutron/constraints.txt) into a
# cached venv keyed by the version and a hash of the constraints, so a machine pays for the
# install once. The openstack integration tests run testenv/neutron/serve.py with its python.
#
#   scripts/neutron.sh          install if missing (logs cache hit/miss and time)
#   scripts/neutron.sh path     print NEUTRON_PYTHON=<path> (exit 1 if not installed)
#
# NEUTRON_VENV overrides the venv location.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NEUTRON_VERSION=29.0.0
CONSTRAINTS="$ROOT/testenv/neutron/constraints.txt"
KEY="$(sha256sum "$CONSTRAINTS" | cut -c1-12)"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/cloud-route-controller"
VENV="${NEUTRON_VENV:-$CACHE_ROOT/neutron-$NEUTRON_VERSION-$KEY}"
PYTHON="$VENV/bin/python"
# Written last: a venv interrupted mid-install must not count as a cache hit.
STAMP="$VENV/.installed"

log() { echo "neutron.sh: $*" >&2; }

installed() { [[ -f "$STAMP" && -x "$PYTHON" ]]; }

cmd_path() {
  if installed; then
    echo "NEUTRON_PYTHON=$PYTHON"
  else
    log "neutron $NEUTRON_VERSION is not installed at $VENV (run scripts/neutron.sh)"
    return 1
  fi
}

cmd_install() {
  if installed; then
    log "cache hit: neutron $NEUTRON_VERSION at $VENV"
    return 0
  fi
  mkdir -p "$(dirname "$VENV")"
  # Two CI stages or developers installing at once would corrupt one venv.
  exec 9> "$VENV.lock"
  flock 9
  if installed; then
    log "cache hit: neutron $NEUTRON_VERSION at $VENV (installed by a concurrent run)"
    return 0
  fi
  log "cache miss: installing neutron $NEUTRON_VERSION into $VENV"
  local start=$SECONDS
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -c "$CONSTRAINTS" "neutron==$NEUTRON_VERSION"
  # The server must at least import: a broken pin fails here, not in the tests.
  "$PYTHON" -c 'import neutron.server.api, neutron.services.l3_router.l3_router_plugin'
  touch "$STAMP"
  log "installed neutron $NEUTRON_VERSION in $((SECONDS - start))s"
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
