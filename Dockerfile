# cloud-route-controller on Node 24, which runs the TypeScript sources directly
# (type stripping). The `node` devDependency pins Node for development only;
# here the base image provides it. Build: docker build -t cloud-route-controller:0.1.0 .
ARG NODE_VERSION=24
FROM node:${NODE_VERSION}-slim

ENV NODE_ENV=production
WORKDIR /app

# Dependencies first, for layer caching; no dev dependencies, no install scripts.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm cache clean --force

# Node refuses to strip types under node_modules, so the sources live in /app/src.
COPY bin ./bin
COPY src ./src

# The image's `node` user (uid 1000); the files stay root-owned and read-only to it.
USER node

# /metrics and /healthz, /livez, /readyz (--metrics-bind-address, --health-probe-bind-address).
EXPOSE 10270 10271

ENTRYPOINT ["node", "bin/cloud-route-controller.js"]
CMD ["--help"]
