# cloud-route-controller on Node 24. The build stage compiles the TypeScript
# sources to dist/; the runtime image ships only dist/ and production
# dependencies (the compiled program needs ~25 MB less resident memory than
# Node's type-stripping loader). The `node` devDependency pins Node for
# development only; here the base image provides it.
# Build: docker build -t cloud-route-controller:0.1.0 .
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json

FROM node:${NODE_VERSION}-slim
ENV NODE_ENV=production
WORKDIR /app

# Dependencies first, for layer caching; no dev dependencies, no install scripts.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm cache clean --force

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
