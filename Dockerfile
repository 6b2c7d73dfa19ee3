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
RUN ln -s /app/dist/cli/anvil.js /usr/local/bin/anvil && chmod +x /app/dist/cli/anvil.js
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/webhooks',{method:'POST'}).then(r=>process.exit(r.status===401?0:1),()=>process.exit(1))"
ENTRYPOINT ["anvil"]
CMD ["serve"]
