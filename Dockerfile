# syntax=docker/dockerfile:1
# Build stage: compile TypeScript with the dev dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json index.ts ./
COPY src ./src
COPY plugins ./plugins
COPY cli ./cli
COPY examples ./examples
RUN npm run build

# Runtime stage: production dependencies and the compiled output only, as a non-root user.
FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
# A sample handler, so `worker` runs out of the box; real deployments build FROM this image and add theirs.
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
