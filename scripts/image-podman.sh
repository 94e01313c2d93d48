# shellcheck shell=bash
# Sourced by scripts/image.sh: podman and the other tools the image build needs (installed when
# missing), podman's configuration for this machine, one build at a time per cache, and the
# image helpers both stand-ins use.

ensure_tools() {
  local missing=()
  local t
  for t in podman runc mmdebstrap newuidmap; do
    command -v "$t" > /dev/null 2>&1 || missing+=("$t")
  done
  if ((${#missing[@]} > 0)); then
    [[ "$(id -u)" == 0 ]] || die "missing ${missing[*]}; as root: apt-get install -y podman runc mmdebstrap uidmap"
    log "installing podman runc mmdebstrap uidmap (missing: ${missing[*]})"
    DEBIAN_FRONTEND=noninteractive apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y podman runc mmdebstrap uidmap
  fi
  command -v npm > /dev/null 2>&1 || die "npm is needed (npm pack, npm sbom)"
}

# crun fails on this machine's hybrid cgroups, and raising ulimits is not permitted here.
write_containers_conf() {
  mkdir -p "$CACHE"
  local want
  want=$'# Written by scripts/image.sh (shared TESTENV.md section 10).\n[containers]\ndefault_ulimits = []\n\n[engine]\ncgroup_manager = "cgroupfs"\nruntime = "runc"\n'
  if [[ ! -f "$CONTAINERS_CONF_FILE" || "$(cat "$CONTAINERS_CONF_FILE")"$'\n' != "$want" ]]; then
    printf '%s' "$want" > "$CONTAINERS_CONF_FILE.tmp.$$"
    mv -f "$CONTAINERS_CONF_FILE.tmp.$$" "$CONTAINERS_CONF_FILE"
  fi
  export CONTAINERS_CONF="$CONTAINERS_CONF_FILE"
}

# One build at a time per cache (the stand-in's tag, the rootfs tar, the npm tarballs).
take_lock() {
  mkdir -p "$CACHE"
  exec 9> "$CACHE/.lock"
  if ! flock -n 9; then
    log "waiting for another scripts/image.sh ($CACHE/.lock)"
    flock -w "${IMAGE_LOCK_TIMEOUT:-3600}" 9 || die "timed out waiting for $CACHE/.lock"
  fi
}

# The image a rebuild untagged, unless something still uses it (then podman refuses).
drop_replaced() {
  local old_id="$1" ref="$2"
  if [[ -n "$old_id" && "$old_id" != "$(podman image inspect --format '{{.Id}}' "$ref")" ]]; then
    podman rmi "$old_id" > /dev/null 2>&1 || true
  fi
}

image_mb() {
  local bytes
  bytes="$(podman image inspect --format '{{.Size}}' "$1")"
  echo $(((bytes + 500000) / 1000000))
}
