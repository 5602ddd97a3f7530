# syntax=docker/dockerfile:1
# The funding service: one image for every role (ROLE=api, worker or all).
#   docker build -t funding-service .
# The build stage compiles with the dev dependencies; the runtime stage holds the production
# dependencies, dist/src and the partner guide it serves (dist/docs) only, runs as the unprivileged
# `node` user, and starts node itself (no npm, no shell in between), so SIGTERM reaches the service
# and it drains before exiting.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY bench ./bench
COPY src ./src
COPY docs ./docs
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/docs ./dist/docs
USER node
EXPOSE 3000
# /ready: PostgreSQL and Redis answer. Every role serves it (a worker serves only the operations
# endpoints) on PORT.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--max-semi-space-size=16", "--heap-growing-percent=50", "dist/src/main.js"]
