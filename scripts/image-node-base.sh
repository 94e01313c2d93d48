# shellcheck shell=bash
# Sourced by scripts/image.sh: the local stand-in for the Dockerfile's build base,
# docker.io/library/node:24-slim (testenv/node-base/; scripts/image.sh's header says what it
# holds): its inputs (the rootfs tar, the Node runtime, npm packs, the CA bundle), each cached
# under $CACHE, and `cmd_base`, which builds it when an input changed.

BASE_IMAGE=docker.io/library/node:24-slim
BASE_MAJOR=24
SUITE=bookworm
# npm, corepack and yarn in the stand-in: npm 11 is Node 24's; yarn is the official image's.
NPM_SPEC=npm@11
COREPACK_SPEC=corepack@0
YARN_VERSION=1.22.22
# Bumped when the stand-in's recipe changes in a way its inputs do not show.
STANDIN_FORMAT=1

sha() { sha256sum "$1" | cut -d' ' -f1; }

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

# The hash of all of the stand-in's inputs, its label: a changed input rebuilds it.
standin_key() {
  local tar_sha="$1" containerfile="$2" npm_tgz="$3" corepack_tgz="$4" yarn_tgz="$5" ca="$6"
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
}

# The stand-in's build context in CTX: the official image's /usr/local layout (Node, npm,
# corepack, yarn), the CA bundle and the Containerfile.
standin_context() {
  local ctx="$1" containerfile="$2" npm_tgz="$3" corepack_tgz="$4" yarn_tgz="$5" ca="$6"
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
  key="$(standin_key "$tar_sha" "$containerfile" "$npm_tgz" "$corepack_tgz" "$yarn_tgz" "$ca")"
  if [[ "${existing:-}" == "$key" ]]; then
    log "cache hit: $BASE_IMAGE (stand-in $key; $((SECONDS - t0)) s)"
    return
  fi
  log "cache miss: $BASE_IMAGE (stand-in $key${existing:+, was $existing})"
  ensure_rootfs_image "$tar_sha"

  # The build context: the official image's /usr/local layout.
  local ctx="$CACHE/node-base-context"
  standin_context "$ctx" "$containerfile" "$npm_tgz" "$corepack_tgz" "$yarn_tgz" "$ca"

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
