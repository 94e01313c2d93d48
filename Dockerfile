# cloud-route-controller on Node 24, on a distroless runtime: glibc, libstdc++, CA certificates,
# tzdata and the Node binary; no shell, no package manager, no npm. The build stage compiles the
# TypeScript sources and bundles the program with its dependencies (scripts/bundle-image.ts);
# the runtime image ships that bundle, the two packages it loads from node_modules, and Node.
# Build: docker build -t cloud-route-controller:0.1.0 .
# (Without a Docker engine or a registry: scripts/image.sh build, which builds local stand-ins
# for both bases and passes them as NODE_BASE and RUNTIME_BASE.)
#
# Both bases are pinned by digest (a tag moves; a digest is the bytes that were reviewed). To
# move to newer ones, replace the digests with those the registry lists for the tags now
# (e.g. `crane digest gcr.io/distroless/cc-debian12:nonroot`), then rebuild and test. The Node
# shipped is the build base's; keep its major version that of the `node` devDependency.
ARG NODE_BASE=docker.io/library/node:24-slim@sha256:a9f5f7c91a432850b2a8a7797adf5eadb6c733ceed61167806cee7ea7fbc29df
ARG RUNTIME_BASE=gcr.io/distroless/cc-debian12:nonroot@sha256:9dac0a79194e45a7da0158a9c6da57b217585af0786db3845d1f0ec1a0dd182f

# The build base's Node binary without its symbol table and debug information (strip --strip-all:
# 126.6 MB to 108.5 MB for Node 24.21). What Node exports to native addons (.dynsym) stays, and
# with it the names in a native backtrace; JavaScript stack traces are unaffected.
FROM ${NODE_BASE} AS node-bin
RUN apt-get update -q && apt-get install -q -y --no-install-recommends binutils > /dev/null \
  && strip --strip-all -o /node /usr/local/bin/node && /node --version

FROM ${NODE_BASE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/bundle-aws.ts scripts/bundle-image.ts ./scripts/
COPY src ./src
# `npm run build`, spelled out: the base image's Node, not the `node` devDependency (whose
# binary an --ignore-scripts install does not fetch); it bundles the aws plug-in's AWS SDK
# (scripts/bundle-aws.ts). Then the program and what it uses of its dependencies into bundle/
# (scripts/bundle-image.ts: dist/ and vendor/, one file per module), which also lists what it
# bundled, for the SBOM, and what it left to node_modules.
RUN npx tsc -p tsconfig.build.json && node scripts/bundle-aws.ts \
  && node scripts/bundle-image.ts bundle

# node_modules with only the packages the bundle leaves external (bundle/dist/
# external-packages.json) and their dependencies, without install scripts, and without what
# Node never loads from node_modules: type declarations and TypeScript sources, source maps and
# documentation (licence and notice files stay). The image's package.json is this stage's, so
# it names what node_modules holds.
FROM ${NODE_BASE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=build /src/bundle/dist/external-packages.json /tmp/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && node -e ' \
    const fs = require("node:fs"); \
    const keep = JSON.parse(fs.readFileSync("/tmp/external-packages.json", "utf8")); \
    const pkg = JSON.parse(fs.readFileSync("package.json", "utf8")); \
    for (const d of Object.keys(pkg.dependencies)) if (!keep.includes(d)) delete pkg.dependencies[d]; \
    fs.writeFileSync("package.json", JSON.stringify(pkg, null, 2) + "\n");' \
  && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
  && find node_modules -type f \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' \
    -o \( -iname '*.md' ! -iname 'licen[cs]e*' ! -iname 'notice*' \) \) -delete \
  && find node_modules -type d -empty -delete \
  && rm -f package-lock.json

FROM ${RUNTIME_BASE}
# Node's own binary, nothing else of the build base (no npm, no headers, no shell).
COPY --from=node-bin /node /usr/local/bin/node
ENV NODE_ENV=production
WORKDIR /app
# Dependencies first (they change least), then the package metadata, the shim and the bundled
# program; everything stays root-owned and read-only to the user below.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/package.json ./
COPY bin/*.js ./bin/
COPY --from=build /src/bundle/ ./

# uid and gid 1000, as the chart's securityContext runs it (the base's passwd has no entry for
# it; nothing in the daemon looks one up).
USER 1000:1000

# HTTPS: /metrics (delegated authentication) and /healthz, /livez, /readyz (--secure-port; the
# daemon's default, the CCM's; the chart passes 10272).
EXPOSE 10258

# The shim starts the daemon with V8's young generation capped (bin/node-flags.js; ~60 MB less
# resident memory at 5 000 nodes), in place by process.execve, so it stays PID 1. A
# --max-semi-space-size or --max-heap-size in NODE_OPTIONS replaces that default.
ENTRYPOINT ["/usr/local/bin/node", "/app/bin/cloud-route-controller.js"]
CMD ["--help"]
