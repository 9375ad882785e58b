# syntax=docker/dockerfile:1
# Skillhost on a PostgreSQL of your own (DATABASE_URL; docker-compose.yml brings one): the image holds
# no embedded PostgreSQL. test/ops/docker-build.int-spec.ts builds both stages from this file without
# Docker, from exactly what .dockerignore lets into the context, and starts the result.

# Build stage: every dependency, then the shipped code compiled (the server, its migrations and the
# web page; no tests, no benchmarks).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The workspace packages' manifests, so that npm ci links them (their sources come below).
COPY packages/core/package.json ./packages/core/
COPY packages/sandbox/package.json ./packages/sandbox/
COPY packages/nest/package.json ./packages/nest/
COPY packages/ai-sdk/package.json ./packages/ai-sdk/
# No scripts: `prepare` would build before the sources are here, and the build is the next step.
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts
COPY tsconfig.json tsconfig.release.json ./
COPY packages ./packages
COPY src ./src
COPY migrations ./migrations
COPY web ./web
COPY tools/build-web-assets.mjs ./tools/
RUN npm run build:release

# Runtime stage: production dependencies, the compiled output, the CLI, the bundled skills, a config.
FROM node:20-bookworm-slim
# Reachable from outside the container, so API keys are always required. The skill store's cache
# goes under /tmp, writable whatever user the container runs as (the app's own files are not).
ENV NODE_ENV=production \
    SKILLHOST_HOST=0.0.0.0 \
    SKILLHOST_AUTH_MODE=api_key \
    SKILLHOST_SKILLS_STORE_DIRECTORY=/tmp/skillhost/skill-store \
    SKILLHOST_DATABASE_EMBEDDED_DIR=/tmp/skillhost/postgres
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/core/package.json ./packages/core/
COPY packages/sandbox/package.json ./packages/sandbox/
COPY packages/nest/package.json ./packages/nest/
COPY packages/ai-sdk/package.json ./packages/ai-sdk/
# The optional dependencies are the embedded PostgreSQL and its programs (60 MB), unused with DATABASE_URL.
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --omit=optional --ignore-scripts
COPY --from=build /app/dist ./dist
COPY --from=build /app/packages/core/dist ./packages/core/dist
COPY --from=build /app/packages/sandbox/dist ./packages/sandbox/dist
COPY --from=build /app/packages/nest/dist ./packages/nest/dist
COPY --from=build /app/packages/ai-sdk/dist ./packages/ai-sdk/dist
COPY bin ./bin
COPY skills ./skills
COPY config.toml LICENSE ./
EXPOSE 3000
USER node
CMD ["node", "dist/src/main.js"]
