#!/usr/bin/env bash
# Installs Keystone (PyPI `keystone`, pinned with testenv/keystone/constraints.txt) into a cached
# venv keyed by the version and a hash of the constraints and serve.py's template code, and builds its template
# database once (keystone-manage db_sync and bootstrap on SQLite, about a minute), so a test's
# Keystone starts from a copy. The openstack integration tests run testenv/keystone/serve.py.
#
#   scripts/keystone.sh          install if missing (logs cache hit/miss and time)
#   scripts/keystone.sh path     print KEYSTONE_PYTHON=<path> and KEYSTONE_TEMPLATE=<dir> (exit 1 if not installed)
#
# KEYSTONE_VENV overrides the venv location.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KEYSTONE_VERSION=30.0.0
CONSTRAINTS="$ROOT/testenv/keystone/constraints.txt"
SERVE="$ROOT/testenv/keystone/serve.py"
# The template's code (serve.py from write_config to main) is part of the key; serving code is not.
KEY="$( (cat "$CONSTRAINTS" && sed -n '/^def write_config/,/^def main/p' "$SERVE") | sha256sum | cut -c1-12)"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/cloud-route-controller"
VENV="${KEYSTONE_VENV:-$CACHE_ROOT/keystone-$KEYSTONE_VERSION-$KEY}"
PYTHON="$VENV/bin/python"
TEMPLATE="$VENV/template"
# Written last: a venv interrupted mid-install must not count as a cache hit.
STAMP="$VENV/.installed"

log() { echo "keystone.sh: $*" >&2; }

installed() { [[ -f "$STAMP" && -x "$PYTHON" && -f "$TEMPLATE/keystone.sqlite" ]]; }

cmd_path() {
  if installed; then
    echo "KEYSTONE_PYTHON=$PYTHON"
    echo "KEYSTONE_TEMPLATE=$TEMPLATE"
  else
    log "keystone $KEYSTONE_VERSION is not installed at $VENV (run scripts/keystone.sh)"
    return 1
  fi
}

cmd_install() {
  if installed; then
    log "cache hit: keystone $KEYSTONE_VERSION at $VENV"
    return 0
  fi
  mkdir -p "$(dirname "$VENV")"
  exec 9> "$VENV.lock"
  flock 9
  if installed; then
    log "cache hit: keystone $KEYSTONE_VERSION at $VENV (installed by a concurrent run)"
    return 0
  fi
  log "cache miss: installing keystone $KEYSTONE_VERSION into $VENV"
  local start=$SECONDS
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -c "$CONSTRAINTS" "keystone==$KEYSTONE_VERSION"
  "$PYTHON" "$SERVE" --make-template "$TEMPLATE" > "$VENV/template.log" 2>&1 ||
    {
      tail -20 "$VENV/template.log" >&2
      exit 1
    }
  touch "$STAMP"
  log "installed keystone $KEYSTONE_VERSION in $((SECONDS - start))s"
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
