# shellcheck shell=bash
# Sourced by scripts/image.sh: `cmd_sbom`, the CycloneDX SBOM of what the image ships (see
# scripts/image.sh's header); it builds the image with image.sh's cmd_build when it is missing.

# The image's /app tree into APP, and the control files of its base's Debian packages into
# STATUS_DIR.
sbom_copy_out() {
  local tag="$1" app="$2" status_dir="$3" cid
  cid="$(podman create "$tag")"
  if ! podman cp "$cid:/app" "$app"; then
    podman rm "$cid" > /dev/null || true
    die "could not copy /app out of $tag"
  fi
  # The base's Debian packages as distroless records them (one control file each); none in an
  # image whose base has a dpkg database instead.
  mkdir -p "$status_dir"
  podman cp "$cid:/var/lib/dpkg/status.d/." "$status_dir" 2> /dev/null || true
  podman rm "$cid" > /dev/null
}

# npm sbom's SBOM (FILE) with the image's tag, the packages bundled into dist/, the base's
# Debian packages (STATUS_DIR) and the Node runtime, written to OUT; prints the number of
# components. Arguments: FILE OUT NODE_VERSION TAG BUNDLED_FILE STATUS_DIR.
sbom_merge() {
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
    process.stdout.write(String(bom.components.length));' "$@"
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
  local tmp app
  tmp="$(mktemp -d)"
  # npm sbom names the root component after its folder.
  app="$tmp/$(pkg_field "$ROOT/package.json" name)"
  # shellcheck disable=SC2064 # expand now: tmp is local
  trap "rm -rf '$tmp'" EXIT
  sbom_copy_out "$tag" "$app" "$tmp/status.d"
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
  sbom_merge "$tmp/sbom.json" "$out" "$node_version" "$tag" "$app/dist/bundled-packages.json" "$tmp/status.d" \
    > "$tmp/count"
  log "SBOM of $tag ($(cat "$tmp/count") components) written to $out"
}
