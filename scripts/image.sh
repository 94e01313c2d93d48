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
BASE_IMAGE=docker.io/library/node:24-slim
BASE_MAJOR=24
SUITE=bookworm
# npm, corepack and yarn in the stand-in: npm 11 is Node 24's; yarn is the official image's.
NPM_SPEC=npm@11
COREPACK_SPEC=corepack@0
YARN_VERSION=1.22.22
# Bumped when the stand-in's recipe changes in a way its inputs do not show.
STANDIN_FORMAT=1
KEY_LABEL=io.cloud-route-controller.stand-in-key
CONTAINERS_CONF_FILE="$CACHE/containers.conf"

# shellcheck source=scripts/image-runtime-base.sh
source "$ROOT/scripts/image-runtime-base.sh"

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

# ---------------------------------------------------------------------------------------------
# tools and podman configuration

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

sha() { sha256sum "$1" | cut -d' ' -f1; }
pkg_field() { node -p "require(process.argv[1]).$2" "$1"; }

project_version() { pkg_field "$ROOT/package.json" version; }
default_tag() { echo "cloud-route-controller:$(project_version)"; }

node_arch() {
  case "$(uname -m)" in
    x86_64) echo x64 ;;
    aarch64) echo arm64 ;;
    ppc64le) echo ppc64le ;;
    s390x) echo s390x ;;
    *) die "no Node build for $(uname -m)" ;;
  esac
}
openssl_arch() {
  case "$(uname -m)" in
    x86_64) echo linux-x86_64 ;;
    aarch64) echo linux-aarch64 ;;
    ppc64le) echo linux-ppc64le ;;
    s390x) echo linux64-s390x ;;
  esac
}

# ---------------------------------------------------------------------------------------------
# stand-in inputs

# The bookworm root file system: minbase (Essential, Priority: required, apt) with
# ca-certificates and libstdc++6 (Node needs it), without documentation, manual pages and
# locales, as Debian's -slim images; merged /usr by usr-is-merged, as Debian's images (not by
# the usrmerge package, which brings ~50 MB of perl). The tar's name carries a hash of the
# recipe, so a changed recipe misses the cache.
ROOTFS_TAR=""
ensure_rootfs_tar() {
  local arch recipe
  arch="$(dpkg --print-architecture)"
  # shellcheck disable=SC2054 # --include takes a comma-separated list
  local args=(
    --variant=minbase --format=tar --architectures="$arch"
    --include=ca-certificates,libstdc++6
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
    --dpkgopt='path-exclude=/usr/share/man/*'
    --dpkgopt='path-exclude=/usr/share/info/*'
    --dpkgopt='path-exclude=/usr/share/groff/*'
    --dpkgopt='path-exclude=/usr/share/lintian/*'
    --dpkgopt='path-exclude=/usr/share/doc/*'
    --dpkgopt='path-include=/usr/share/doc/*/copyright'
    --dpkgopt='path-exclude=/usr/share/locale/*'
    --dpkgopt='path-include=/usr/share/locale/locale.alias'
    "$SUITE"
  )
  recipe="$(printf '%s\n' "${args[@]}" | sha256sum | cut -c1-12)"
  ROOTFS_TAR="$CACHE/debian-$SUITE-minbase-$arch-$recipe.tar"
  if [[ -s "$ROOTFS_TAR" && "${IMAGE_FRESH_ROOTFS:-0}" != 1 ]]; then
    log "cache hit: rootfs $ROOTFS_TAR ($(du -m "$ROOTFS_TAR" | cut -f1) MB)"
    return
  fi
  log "cache miss: rootfs; mmdebstrap --variant=minbase $SUITE (about 45 s)"
  local t0=$SECONDS tmp="$CACHE/tmp.$$.${ROOTFS_TAR##*/}"
  rm -f "$tmp"
  mmdebstrap "${args[@]}" "$tmp" >&2 || {
    rm -f "$tmp"
    die "mmdebstrap failed"
  }
  mv -f "$tmp" "$ROOTFS_TAR"
  # Older recipes' tars.
  find "$CACHE" -maxdepth 1 -name "debian-$SUITE-minbase-$arch-*.tar" ! -name "$(basename "$ROOTFS_TAR")" -delete
  log "rootfs built in $((SECONDS - t0)) s ($(du -m "$ROOTFS_TAR" | cut -f1) MB)"
}

# `npm pack SPEC` into $CACHE/pkgs, once: the resolved file name is remembered, so a later run
# needs no registry. Sets PACKED to the tarball.
PACKED=""
ensure_packed() {
  local spec="$1" dir="$CACHE/pkgs"
  local memo="$dir/${spec//[@\/]/_}.name"
  mkdir -p "$dir"
  if [[ -s "$memo" && -s "$dir/$(cat "$memo")" ]]; then
    PACKED="$dir/$(cat "$memo")"
    log "cache hit: $spec ($(basename "$PACKED"))"
    return
  fi
  log "cache miss: npm pack $spec"
  local name
  name="$(cd "$dir" && npm pack --silent "$spec" | tail -n 1)"
  [[ -n "$name" && -s "$dir/$name" ]] || die "npm pack $spec produced no tarball"
  echo "$name" > "$memo"
  PACKED="$dir/$name"
}

# The Node runtime: the package behind the `node` devDependency (node-linux-<arch>, whose
# bin/node node_modules/node/bin/node is or links to). From this checkout's node_modules when it
# holds the pinned version, else `npm pack node-linux-<arch>@<pin>`. Sets NODE_PKG_DIR and
# NODE_BIN (the real file, never a symlink) and NODE_PIN.
NODE_PKG_DIR=""
NODE_BIN=""
NODE_PIN=""
resolve_node() {
  NODE_PIN="$(node -e '
    const lock = require(process.argv[1]);
    const n = lock.packages && lock.packages["node_modules/node"];
    if (!n) process.exit(1);
    console.log(n.version);' "$ROOT/package-lock.json")" || die "package-lock.json pins no node package"
  [[ "${NODE_PIN%%.*}" == "$BASE_MAJOR" ]] || die "the pinned node $NODE_PIN is not Node $BASE_MAJOR"
  local arch d
  arch="$(node_arch)"
  if [[ -x "$ROOT/node_modules/.bin/node" ]] &&
    [[ "$("$ROOT/node_modules/.bin/node" --version 2> /dev/null)" == "v$NODE_PIN" ]]; then
    NODE_BIN="$(readlink -f "$ROOT/node_modules/node/bin/node")"
    for d in "$ROOT/node_modules/node/node_modules/node-linux-$arch" "$ROOT/node_modules/node-linux-$arch"; do
      if [[ -f "$d/bin/node" ]] && cmp -s "$d/bin/node" "$NODE_BIN"; then
        NODE_PKG_DIR="$d"
        break
      fi
    done
    if [[ -n "$NODE_PKG_DIR" ]]; then
      log "node v$NODE_PIN from this checkout ($NODE_PKG_DIR)"
      return
    fi
  fi
  ensure_packed "node-linux-$arch@$NODE_PIN"
  NODE_PKG_DIR="$CACHE/pkgs/node-linux-$arch-$NODE_PIN"
  if [[ ! -x "$NODE_PKG_DIR/bin/node" ]]; then
    rm -rf "$NODE_PKG_DIR" "$NODE_PKG_DIR.tmp"
    mkdir -p "$NODE_PKG_DIR.tmp"
    tar -xzf "$PACKED" -C "$NODE_PKG_DIR.tmp" --strip-components=1 --no-same-owner
    mv "$NODE_PKG_DIR.tmp" "$NODE_PKG_DIR"
  fi
  NODE_BIN="$NODE_PKG_DIR/bin/node"
  [[ "$("$NODE_BIN" --version)" == "v$NODE_PIN" ]] || die "$NODE_BIN is not v$NODE_PIN"
  log "node v$NODE_PIN from npm pack node-linux-$arch@$NODE_PIN"
}

ca_bundle() {
  local f="${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
  [[ -s "$f" ]] || die "no CA bundle at $f"
  readlink -f "$f"
}

# ---------------------------------------------------------------------------------------------
# base

ROOTFS_IMAGE=localhost/cloud-route-controller/stand-in-rootfs:$SUITE

# The imported rootfs image, labelled with the tar's hash.
ensure_rootfs_image() {
  local tar_sha="$1" have
  have="$(podman image inspect --format "{{index .Labels \"$KEY_LABEL\"}}" "$ROOTFS_IMAGE" 2> /dev/null || true)"
  if [[ "$have" == "$tar_sha" ]]; then
    log "cache hit: $ROOTFS_IMAGE"
    return
  fi
  log "cache miss: podman import $ROOTFS_IMAGE"
  local old_id
  old_id="$(podman image inspect --format '{{.Id}}' "$ROOTFS_IMAGE" 2> /dev/null || true)"
  podman import \
    --change "LABEL $KEY_LABEL=$tar_sha" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' \
    "$ROOTFS_TAR" "$ROOTFS_IMAGE" > /dev/null
  drop_replaced "$old_id" "$ROOTFS_IMAGE"
}

# Unpacks an npm tarball's package/ into DIR.
unpack() {
  mkdir -p "$2"
  tar -xzf "$1" -C "$2" --strip-components=1 --no-same-owner
}

cmd_base() {
  local t0=$SECONDS
  write_containers_conf
  local existing
  if podman image exists "$BASE_IMAGE" && [[ "${IMAGE_REBUILD_BASE:-0}" != 1 ]]; then
    existing="$(podman image inspect --format "{{index .Labels \"$KEY_LABEL\"}}" "$BASE_IMAGE")"
    if [[ -z "$existing" || "$existing" == "<no value>" ]]; then
      log "using $BASE_IMAGE as it is: not a stand-in (no $KEY_LABEL label)"
      return
    fi
  fi

  ensure_rootfs_tar
  resolve_node
  ensure_packed "$NPM_SPEC"
  local npm_tgz="$PACKED"
  ensure_packed "$COREPACK_SPEC"
  local corepack_tgz="$PACKED"
  ensure_packed "yarn@$YARN_VERSION"
  local yarn_tgz="$PACKED"
  local ca containerfile="$ROOT/testenv/node-base/Containerfile"
  ca="$(ca_bundle)"

  local tar_sha key
  tar_sha="$(sha "$ROOTFS_TAR")"
  key="$(
    {
      echo "format $STANDIN_FORMAT suite $SUITE node $NODE_PIN yarn $YARN_VERSION openssl $(openssl_arch)"
      echo "rootfs $tar_sha"
      echo "containerfile $(sha "$containerfile")"
      echo "node $(sha "$NODE_BIN")"
      echo "npm $(basename "$npm_tgz") $(sha "$npm_tgz")"
      echo "corepack $(basename "$corepack_tgz") $(sha "$corepack_tgz")"
      echo "yarn $(sha "$yarn_tgz")"
      echo "ca $(sha "$ca")"
    } | sha256sum | cut -c1-32
  )"
  if [[ "${existing:-}" == "$key" ]]; then
    log "cache hit: $BASE_IMAGE (stand-in $key; $((SECONDS - t0)) s)"
    return
  fi
  log "cache miss: $BASE_IMAGE (stand-in $key${existing:+, was $existing})"
  ensure_rootfs_image "$tar_sha"

  # The build context: the official image's /usr/local layout.
  local ctx="$CACHE/node-base-context"
  rm -rf "$ctx"
  mkdir -p "$ctx/node/bin"
  install -m 0755 "$NODE_BIN" "$ctx/node/bin/node"
  local f
  for f in include share CHANGELOG.md LICENSE README.md; do
    if [[ -e "$NODE_PKG_DIR/$f" ]]; then cp -R "$NODE_PKG_DIR/$f" "$ctx/node/"; fi
  done
  # The official image keeps the OpenSSL headers of its own architecture only.
  if [[ -d "$ctx/node/include/node/openssl/archs" ]]; then
    find "$ctx/node/include/node/openssl/archs" -mindepth 1 -maxdepth 1 ! -name "$(openssl_arch)" -exec rm -rf {} +
  fi
  unpack "$npm_tgz" "$ctx/npm"
  unpack "$corepack_tgz" "$ctx/corepack"
  unpack "$yarn_tgz" "$ctx/yarn"
  chmod 0755 "$ctx/npm/bin/npm-cli.js" "$ctx/npm/bin/npx-cli.js" "$ctx/corepack/dist/corepack.js" \
    "$ctx/yarn/bin/yarn" "$ctx/yarn/bin/yarnpkg"
  install -m 0644 "$ca" "$ctx/host-ca-bundle.crt"
  cp "$containerfile" "$ctx/Containerfile"

  local tb=$SECONDS old_id
  old_id="$(podman image inspect --format '{{.Id}}' "$BASE_IMAGE" 2> /dev/null || true)"
  podman build --pull=never --network=host \
    --build-arg "ROOTFS=$ROOTFS_IMAGE" \
    --build-arg "NODE_VERSION=$NODE_PIN" \
    --build-arg "YARN_VERSION=$YARN_VERSION" \
    --label "$KEY_LABEL=$key" \
    -t "$BASE_IMAGE" -f "$ctx/Containerfile" "$ctx" >&2
  rm -rf "$ctx"
  drop_replaced "$old_id" "$BASE_IMAGE"
  log "stand-in $BASE_IMAGE built in $((SECONDS - tb)) s (base total $((SECONDS - t0)) s, $(image_mb "$BASE_IMAGE") MB)"
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

# ---------------------------------------------------------------------------------------------
# build, env, sbom

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

# npm's SBOM of the image's own /app tree (what node_modules holds), plus the npm packages
# bundled into its dist/ (dist/bundled-packages.json, scripts/bundle-image.ts), the Node runtime
# it runs on and the Debian packages of its base (/var/lib/dpkg/status.d/).
cmd_sbom() {
  local out="${1:-$ROOT/dist-image/sbom.cdx.json}" tag
  tag="$(resolve_tag "${2:-}")"
  write_containers_conf
  if ! podman image exists "$tag"; then
    log "no image $tag: building it"
    cmd_build "$tag" > /dev/null
  fi
  local tmp cid app
  tmp="$(mktemp -d)"
  # npm sbom names the root component after its folder.
  app="$tmp/$(pkg_field "$ROOT/package.json" name)"
  # shellcheck disable=SC2064 # expand now: tmp is local
  trap "rm -rf '$tmp'" EXIT
  cid="$(podman create "$tag")"
  if ! podman cp "$cid:/app" "$app"; then
    podman rm "$cid" > /dev/null || true
    die "could not copy /app out of $tag"
  fi
  # The base's Debian packages as distroless records them (one control file each); none in an
  # image whose base has a dpkg database instead.
  mkdir -p "$tmp/status.d"
  podman cp "$cid:/var/lib/dpkg/status.d/." "$tmp/status.d" 2> /dev/null || true
  podman rm "$cid" > /dev/null
  local node_version
  node_version="$(podman run --rm --network=none --read-only --cap-drop=ALL --user 1000:1000 \
    --entrypoint node "$tag" -p process.versions.node)"
  mkdir -p "$(dirname "$out")"
  if [[ "$out" == "$ROOT/dist-image/"* && ! -e "$ROOT/dist-image/.gitignore" ]]; then
    echo '*' > "$ROOT/dist-image/.gitignore"
  fi
  # The image's package.json still names the devDependencies, which npm sbom reports as
  # missing even with --omit=dev; the copy drops them.
  node -e '
    const fs = require("node:fs");
    const pkg = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    delete pkg.devDependencies;
    fs.writeFileSync(process.argv[1], JSON.stringify(pkg, null, 2));' "$app/package.json"
  (cd "$app" && npm sbom --sbom-format cyclonedx --sbom-type application --omit=dev) > "$tmp/sbom.json"
  # shellcheck disable=SC2016 # JavaScript template literals
  node -e '
    const fs = require("node:fs");
    const [file, out, nodeVersion, tag, bundledFile, statusDir] = process.argv.slice(1);
    const bom = JSON.parse(fs.readFileSync(file, "utf8"));
    bom.metadata.properties = [...(bom.metadata.properties ?? []), { name: "image", value: tag }];
    // The packages bundled into dist/ (scripts/bundle-image.ts): shipped, but not under
    // node_modules, where npm sbom looks.
    const bundled = fs.existsSync(bundledFile) ? JSON.parse(fs.readFileSync(bundledFile, "utf8")) : [];
    for (const p of bundled) {
      const purlName = p.name.startsWith("@") ? `%40${p.name.slice(1)}` : p.name;
      bom.components.push({
        "bom-ref": `${p.name}@${p.version}`,
        type: "library",
        name: p.name,
        version: p.version,
        scope: "required",
        description: "bundled into /app/dist/ (scripts/bundle-image.ts)",
        purl: `pkg:npm/${purlName}@${p.version}`,
        ...(p.license ? { licenses: [{ license: { id: p.license } }] } : {}),
      });
    }
    for (const f of fs.existsSync(statusDir) ? fs.readdirSync(statusDir).sort() : []) {
      const fields = Object.fromEntries(
        fs.readFileSync(`${statusDir}/${f}`, "utf8").split("\n")
          .map((l) => /^([A-Za-z-]+): (.*)$/.exec(l)).filter(Boolean).map((m) => [m[1], m[2]]));
      if (!fields.Package || !fields.Version) continue;
      const v = encodeURIComponent(fields.Version);
      bom.components.push({
        "bom-ref": `deb:${fields.Package}@${fields.Version}`,
        type: "library",
        name: fields.Package,
        version: fields.Version,
        description: "Debian package of the runtime base (/var/lib/dpkg/status.d/)",
        purl: `pkg:deb/debian/${fields.Package}@${v}?arch=${fields.Architecture}&distro=debian-12`,
      });
    }
    if (nodeVersion) {
      bom.components.push({
        "bom-ref": `node-runtime@${nodeVersion}`,
        type: "platform",
        name: "node",
        version: nodeVersion,
        description: "Node.js runtime of the image (/usr/local/bin/node)",
        purl: `pkg:generic/node@${nodeVersion}`,
      });
    }
    fs.writeFileSync(out, JSON.stringify(bom, null, 2) + "\n");
    process.stdout.write(String(bom.components.length));' \
    "$tmp/sbom.json" "$out" "$node_version" "$tag" "$app/dist/bundled-packages.json" "$tmp/status.d" > "$tmp/count"
  log "SBOM of $tag ($(cat "$tmp/count") components) written to $out"
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
