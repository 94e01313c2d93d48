# cloud-route-controller on Node 24. The build stage compiles the TypeScript
# sources to dist/; the runtime image ships only dist/ and production
# dependencies (the compiled program needs ~25 MB less resident memory than
# Node's type-stripping loader). The `node` devDependency pins Node for
# development only; here the base image provides it.
# Build: docker build -t cloud-route-controller:0.1.0 .
# (Without a Docker engine or a registry: scripts/image.sh build.)
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/bundle-aws.ts ./scripts/
COPY src ./src
# `npm run build`, spelled out: the base image's Node, not the `node` devDependency (whose
# binary an --ignore-scripts install does not fetch). The second step bundles the aws
# plug-in's AWS SDK into dist/cloud/aws/ (scripts/bundle-aws.ts).
RUN npx tsc -p tsconfig.build.json && node scripts/bundle-aws.ts

# Production dependencies, without install scripts; without the AWS SDK, which
# dist/ carries bundled (what it holds: dist/cloud/aws/ec2-bundled-packages.json,
# which scripts/image.sh adds to the image's SBOM); and without what Node never
# loads from node_modules: type declarations and TypeScript sources (Node does
# not strip types under node_modules), source maps and documentation (licence
# and notice files stay). The image's package.json is this stage's, so it names
# what node_modules holds.
FROM node:${NODE_VERSION}-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm pkg delete 'dependencies.@aws-sdk/client-ec2' \
  && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
  && ! ls -d node_modules/@aws-sdk/* node_modules/@smithy/* 2> /dev/null \
  && find node_modules -type f \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' \
    -o \( -iname '*.md' ! -iname 'licen[cs]e*' ! -iname 'notice*' \) \) -delete \
  && find node_modules -type d -empty -delete

# The base without what the daemon never runs: npm, npx, corepack, yarn (where
# the base has it) and Node's C headers, changelog and manual. Removing them in
# a layer on top would only hide them, so the runtime image starts from a copy
# of this file system as a single layer.
FROM node:${NODE_VERSION}-slim AS runtime-base
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
    /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
    /opt/yarn-v* /usr/local/bin/yarn /usr/local/bin/yarnpkg \
    /usr/local/include/node /usr/local/share/doc/node /usr/local/share/man/man1/node.1 \
    /usr/local/CHANGELOG.md /usr/local/README.md \
  && node --version

FROM scratch
COPY --from=runtime-base / /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NODE_ENV=production
WORKDIR /app

# Dependencies first (they change least), then the package metadata, the shim
# and the compiled program; everything stays root-owned and read-only to `node`.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/package.json ./
# Without src/, the shim runs dist/.
COPY bin ./bin
COPY --from=build /src/dist ./dist

# The image's `node` user (uid 1000); the files stay root-owned and read-only to it.
USER node

# HTTPS: /metrics (delegated authentication) and /healthz, /livez, /readyz (--secure-port).
EXPOSE 10258

# The shim starts the daemon with V8's young generation capped (bin/node-flags.js; ~60 MB less
# resident memory at 5 000 nodes), in place by process.execve, so it stays PID 1. A
# --max-semi-space-size or --max-heap-size in NODE_OPTIONS replaces that default.
ENTRYPOINT ["node", "bin/cloud-route-controller.js"]
CMD ["--help"]
