# syntax=docker/dockerfile:1
# The base, pinned by digest: a tag can be moved to other bytes, a digest cannot. To bump it, pick the new tag
# (a Node 20 patch, or node:22-bookworm-slim; docs/operations.md "Node versions"), run
#   docker buildx imagetools inspect node:<tag>
# and put the first "Digest:" it prints (the multi-platform index) after the "@" below, with the tag before it
# kept in step (Docker goes by the digest alone). test/ops/container.test.ts checks the form.
ARG NODE_IMAGE=node:20.20.2-bookworm-slim@sha256:2cf067cfed83d5ea958367df9f966191a942351a2df77d6f0193e162b5febfc0

# Production dependencies (optional ones included: tracing), exactly as the lockfile has them.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# The build: those dependencies (for their types, pg's among them) plus the compiler, the types of Node, and the
# console's bundler and Preact, at the lockfile's versions; nothing else of the devDependencies (test and benchmark
# tools, provider SDKs, Helm).
FROM deps AS build
RUN npm pkg delete devDependencies && npm install --no-save --no-audit --no-fund \
      "typescript@$(node -p "require('./package-lock.json').packages['node_modules/typescript'].version")" \
      "@types/node@$(node -p "require('./package-lock.json').packages['node_modules/@types/node'].version")" \
      "vite@$(node -p "require('./package-lock.json').packages['node_modules/vite'].version")" \
      "preact@$(node -p "require('./package-lock.json').packages['node_modules/preact'].version")"
COPY tsconfig.json tsconfig.build.json index.ts ./
COPY console ./console
COPY src ./src
COPY plugins ./plugins
COPY testing ./testing
COPY replay ./replay
COPY cli ./cli
COPY scripts/dist.mjs ./scripts/
RUN npm run build

# Runtime: the production dependencies and the compiled output only, as a non-root user.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
# A sample handler, for trying the image (docker-compose.yml); real deployments build FROM this image and add theirs.
COPY examples/handler.js ./examples/handler.js
RUN ln -s /app/dist/cli/anvil.js /usr/local/bin/anvil && chmod +x /app/dist/cli/anvil.js
# The node image's unprivileged user (uid 1000); the chart runs it with a read-only root filesystem.
USER node
EXPOSE 3000
# Liveness only: readiness (Redis reachable) is for orchestrators that route traffic, not for restarts.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["anvil"]
CMD ["serve"]
