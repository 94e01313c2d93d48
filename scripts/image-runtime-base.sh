# shellcheck shell=bash
# Sourced by scripts/image.sh: the local stand-in for the runtime base the Dockerfile pins,
# gcr.io/distroless/cc-debian12:nonroot, on machines that reach no container registry.
#
# What distroless's cc-debian12 holds, built the way it is built: the data of a fixed list of
# Debian bookworm packages extracted (dpkg-deb -x: no maintainer scripts, no dpkg, apt, shell or
# coreutils), each package's control file in /var/lib/dpkg/status.d/ for scanners, the CA bundle
# assembled from ca-certificates' Mozilla certificates, /etc/passwd and /etc/group with root,
# nobody and nonroot (65532), /tmp (1777) and /home/nonroot. Debian's own packages, fetched by
# this machine's apt (apt-get download), so they are the current bookworm and security updates.
# The image carries a label with a hash of the package files and this recipe; a change rebuilds
# it. An existing image of that name without the label (a real one, pulled where a registry is
# reachable) is used as it is.

RUNTIME_BASE_IMAGE=gcr.io/distroless/cc-debian12:nonroot
# distroless base-debian12 (base-files, netbase, tzdata, ca-certificates, libc6, libssl3) and
# cc-debian12's additions (libgcc-s1, libgomp1, libstdc++6). Node needs libc6, libgcc-s1 and
# libstdc++6 (it carries its own OpenSSL).
RUNTIME_PACKAGES=(base-files netbase tzdata ca-certificates libc6 libssl3 libgcc-s1 libgomp1 libstdc++6)
RUNTIME_FORMAT=1

# Writes the file system into DIR from the .deb files in DEBS.
runtime_rootfs() {
  local debs="$1" dir="$2" deb pkg
  mkdir -p "$dir/var/lib/dpkg/status.d" "$dir/tmp" "$dir/home/nonroot" "$dir/etc/ssl/certs"
  for deb in "$debs"/*.deb; do
    dpkg-deb -x "$deb" "$dir"
    pkg="$(dpkg-deb -f "$deb" Package)"
    {
      dpkg-deb -f "$deb"
      echo "Status: install ok installed"
    } > "$dir/var/lib/dpkg/status.d/$pkg"
  done
  chmod 1777 "$dir/tmp"
  # Documentation, manual pages and lintian overrides: distroless keeps only copyright files.
  find "$dir/usr/share/doc" -type f ! -name copyright -delete 2> /dev/null || true
  rm -rf "$dir/usr/share/man" "$dir/usr/share/lintian" "$dir/usr/share/info"
  # update-ca-certificates' result, without running it: every Mozilla certificate, sorted.
  find "$dir/usr/share/ca-certificates/mozilla" -name '*.crt' | LC_ALL=C sort | xargs cat \
    > "$dir/etc/ssl/certs/ca-certificates.crt"
  printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
    'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
    'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' > "$dir/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'tty:x:5:' 'staff:x:50:' 'nonroot:x:65532:' > "$dir/etc/group"
  chown 65532:65532 "$dir/home/nonroot"
  [[ -e "$dir/etc/nsswitch.conf" ]] || printf 'hosts: files dns\n' > "$dir/etc/nsswitch.conf"
}

cmd_runtime_base() {
  write_containers_conf
  local existing=""
  if podman image exists "$RUNTIME_BASE_IMAGE"; then
    existing="$(podman image inspect --format "{{index .Labels \"$KEY_LABEL\"}}" "$RUNTIME_BASE_IMAGE")"
    if [[ -z "$existing" || "$existing" == "<no value>" ]]; then
      log "using $RUNTIME_BASE_IMAGE as it is: not a stand-in (no $KEY_LABEL label)"
      return
    fi
  fi
  local debs="$CACHE/runtime-debs"
  rm -rf "$debs"
  mkdir -p "$debs"
  log "apt-get download ${RUNTIME_PACKAGES[*]}"
  (cd "$debs" && apt-get download -q "${RUNTIME_PACKAGES[@]}" > /dev/null) || die "apt-get download failed"
  local key
  key="$(
    {
      echo "runtime format $RUNTIME_FORMAT"
      sha256sum "$debs"/*.deb | sed 's|  .*/| |'
    } | sha256sum | cut -c1-32
  )"
  if [[ "$existing" == "$key" ]]; then
    log "cache hit: $RUNTIME_BASE_IMAGE (stand-in $key)"
    return
  fi
  log "cache miss: $RUNTIME_BASE_IMAGE (stand-in $key${existing:+, was $existing})"
  local dir="$CACHE/runtime-rootfs" old_id
  rm -rf "$dir"
  runtime_rootfs "$debs" "$dir"
  old_id="$(podman image inspect --format '{{.Id}}' "$RUNTIME_BASE_IMAGE" 2> /dev/null || true)"
  tar --numeric-owner -C "$dir" -cf - . | podman import \
    --change "LABEL $KEY_LABEL=$key" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
    --change 'USER 65532' \
    --change 'WORKDIR /home/nonroot' \
    - "$RUNTIME_BASE_IMAGE" > /dev/null
  rm -rf "$dir"
  drop_replaced "$old_id" "$RUNTIME_BASE_IMAGE"
  log "stand-in $RUNTIME_BASE_IMAGE: $(image_mb "$RUNTIME_BASE_IMAGE") MB, ${#RUNTIME_PACKAGES[@]} Debian packages"
}
