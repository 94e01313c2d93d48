#!/usr/bin/env bash
# Prerequisites of the network-namespace tests (test/support/netns.ts,
# test/integration/linux.test.ts): `ip` from iproute2, `ping` from iputils and
# `sysctl` from procps (forwarding inside the router namespace).
# Installs them with apt-get only when one is missing, so a fresh CI machine
# gets them and a prepared one is left alone. Needs root for the install.
set -euo pipefail

log() { printf '[netns-prereqs] %s\n' "$*" >&2; }
case "${1:-}" in
  "") ;;
  -h | --help)
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
    exit 0
    ;;
  *)
    echo "error: unknown argument '$1' (usage: $0, no arguments)" >&2
    exit 2
    ;;
esac

missing=()
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
command -v ping >/dev/null 2>&1 || missing+=(iputils-ping)
command -v sysctl >/dev/null 2>&1 || missing+=(procps)

if [ "${#missing[@]}" -eq 0 ]; then
  log "ip, ping and sysctl present: $(ip -V 2>&1 | head -n1)"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  log "ERROR: missing ${missing[*]} and no apt-get to install them; install iproute2, iputils-ping and procps"
  exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    log "ERROR: missing ${missing[*]}; run as root (or with sudo) to install them"
    exit 1
  fi
fi

log "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update
"${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"

command -v ip >/dev/null 2>&1 || { log "ERROR: ip still missing after install"; exit 1; }
command -v ping >/dev/null 2>&1 || { log "ERROR: ping still missing after install"; exit 1; }
command -v sysctl >/dev/null 2>&1 || { log "ERROR: sysctl still missing after install"; exit 1; }
log "ok: $(ip -V 2>&1 | head -n1)"
