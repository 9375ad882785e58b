# Build stage: install everything, compile TypeScript.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bench ./bench
COPY migrations ./migrations
RUN npm ci

# Runtime stage: production dependencies and the compiled output only.
FROM node:20-bookworm-slim
ENV NODE_ENV=production SKILLHOST_HOST=0.0.0.0
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY skills ./skills
COPY config.toml ./config.toml
EXPOSE 3000
USER node
CMD ["node", "dist/src/main.js"]
