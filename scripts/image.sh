#!/usr/bin/env bash
# The container image, built with the project's own Dockerfile by podman, on machines that have
# no Docker engine and reach no container registry (shared TESTENV.md section 10).
#
#   scripts/image.sh base         build (or reuse) the local stand-ins for the Dockerfile's bases,
#                                 docker.io/library/node:24-slim (build stages) and
#                                 gcr.io/distroless/cc-debian12:nonroot (runtime;
#                                 scripts/image-runtime-base.sh)
#   scripts/image.sh build [TAG]  ensure the bases, then build the image (default TAG:
#                                 cloud-route-controller:<package.json version>) and print its size
#   scripts/image.sh env          print CONTAINERS_CONF= (and IMAGE=) for callers' podman commands:
#                                   set -a; eval "$(scripts/image.sh env)"; set +a
#   scripts/image.sh sbom [PATH [TAG]]
#                                 CycloneDX SBOM of what the image ships (its /app tree, the npm
#                                 packages bundled into its dist/, its Node runtime, the Debian
#                                 packages of its base), default
#                                 dist-image/sbom.cdx.json, of TAG (default as for build); builds
#                                 the image if missing
#
# The stand-in (testenv/node-base/) is an mmdebstrap bookworm minbase plus the Node binary of the
# pinned `node` devDependency, npm, corepack and yarn from `npm pack`, and user `node` (1000:1000);
# it alone carries this machine's CA bundle (NODE_EXTRA_CA_CERTS), so npm in the build stage
# reaches the registry. Its image carries a label with a hash of all of its inputs; a changed
# input rebuilds it. An existing docker.io/library/node:24-slim without that label (a real one,
# pulled where a registry is reachable) is used as it is. The Dockerfile pins both bases by
# digest; a stand-in has another digest, so the build passes the stand-ins' tags as NODE_BASE
# and RUNTIME_BASE, and only when a base is a stand-in.
#
# Environment knobs:
#   XDG_CACHE_HOME        cache root (default ~/.cache); files go to cloud-route-controller/image/
#   IMAGE_LOCK_TIMEOUT    seconds to wait for another build's lock (default 3600)
#   IMAGE_REBUILD_BASE=1  rebuild the stand-in (not the cached rootfs tar, nor the npm tarballs)
#   IMAGE_FRESH_ROOTFS=1  also run mmdebstrap again
#   IMAGE_NO_CACHE=1      build the image without podman's layer cache (podman build --no-cache)
#   IMAGE_PINNED_BASES=1  build from the Dockerfile's digest-pinned bases (needs a registry)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/cloud-route-controller/image"
KEY_LABEL=io.cloud-route-controller.stand-in-key
CONTAINERS_CONF_FILE="$CACHE/containers.conf"

# The pieces, each a file of functions: podman and the tools, the two bases' stand-ins, the SBOM.
# shellcheck source=scripts/image-podman.sh
source "$ROOT/scripts/image-podman.sh"
# shellcheck source=scripts/image-node-base.sh
source "$ROOT/scripts/image-node-base.sh"
# shellcheck source=scripts/image-runtime-base.sh
source "$ROOT/scripts/image-runtime-base.sh"
# shellcheck source=scripts/image-sbom.sh
source "$ROOT/scripts/image-sbom.sh"

log() { printf '[image %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}
usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
  exit 0
}
bad_usage() {
  echo "error: $1 (see $0 --help)" >&2
  exit 2
}

pkg_field() { node -p "require(process.argv[1]).$2" "$1"; }

project_version() { pkg_field "$ROOT/package.json" version; }
default_tag() { echo "cloud-route-controller:$(project_version)"; }

# ---------------------------------------------------------------------------------------------
# build, env (base: image-node-base.sh and image-runtime-base.sh; sbom: image-sbom.sh)

resolve_tag() {
  local tag="${1:-}"
  if [[ -z "$tag" ]]; then
    default_tag
  elif [[ "$tag" == *:* ]]; then
    echo "$tag"
  else
    echo "cloud-route-controller:$tag"
  fi
}

cmd_build() {
  local tag t0=$SECONDS
  tag="$(resolve_tag "${1:-}")"
  local extra=()
  if [[ "${IMAGE_PINNED_BASES:-0}" == 1 ]]; then
    log "podman build $tag from the Dockerfile's digest-pinned bases (pulled if missing)"
    extra+=(--pull=missing)
  else
    cmd_base
    cmd_runtime_base
    log "podman build $tag with NODE_BASE=$BASE_IMAGE RUNTIME_BASE=$RUNTIME_BASE_IMAGE"
    extra+=(--pull=never --build-arg "NODE_BASE=$BASE_IMAGE" --build-arg "RUNTIME_BASE=$RUNTIME_BASE_IMAGE")
  fi
  local tb=$SECONDS
  if [[ "${IMAGE_NO_CACHE:-0}" == 1 ]]; then extra+=(--no-cache); fi
  (cd "$ROOT" && podman build --network=host "${extra[@]}" -t "$tag" -f Dockerfile .) >&2
  local bytes
  bytes="$(podman image inspect --format '{{.Size}}' "$tag")"
  log "built $tag in $((SECONDS - tb)) s (total $((SECONDS - t0)) s): $bytes bytes ($(((bytes + 500000) / 1000000)) MB)"
  podman history --format '{{.Size}}\t{{.CreatedBy}}' "$tag" | cut -c1-150 >&2
  echo "$tag"
}

cmd_env() {
  write_containers_conf
  printf 'CONTAINERS_CONF=%q\n' "$CONTAINERS_CONF_FILE"
  printf 'IMAGE=%q\n' "$(default_tag)"
}

main() {
  local cmd="${1:-}"
  [[ -n "$cmd" ]] || bad_usage "a command is required: base, build, env or sbom"
  shift
  case "$cmd" in
    base)
      ensure_tools
      take_lock
      cmd_base
      cmd_runtime_base
      ;;
    build)
      ensure_tools
      take_lock
      cmd_build "$@"
      ;;
    env) cmd_env ;;
    sbom)
      ensure_tools
      take_lock
      cmd_sbom "$@"
      ;;
    -h | --help | help) usage ;;
    *) bad_usage "unknown command '$cmd'" ;;
  esac
}

main "$@"
