# The gateway's image (docs/deploy.md "Kubernetes"). Built with the dev dependencies, run with none:
# dist/ bundles every library (scripts/build.ts), so the runtime stage holds dist/ and package.json
# (the version on sms_instance_info) and no node_modules. test/e2e/dockerfile-copy.test.ts copies
# what the runtime stage's COPY lines name into an empty folder and starts it.
#
#   docker build --build-arg BUILD_COMMIT=$(git rev-parse HEAD) -t sms-graphql-gateway .
#   docker run -p 4000:4000 -e UPSTREAM_URL=simulator -e GATEWAY_SECRET=$(openssl rand -hex 32) sms-graphql-gateway

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# The manifest and lockfile alone first: this layer is reused until a dependency changes.
COPY package.json package-lock.json ./
# No install scripts: the build needs none (esbuild's binary comes in its platform package), and
# `prepare` would build before the sources are here. The build follows, once.
RUN npm ci --ignore-scripts --no-audit --no-fund
# tsconfig.json too: esbuild reads its compiler options.
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
# The image has no .git: the commit sms_instance_info reports is passed in
# (`docker build --build-arg BUILD_COMMIT=$(git rev-parse HEAD) .`), else it reads "unknown".
ARG BUILD_COMMIT=""
RUN BUILD_COMMIT="${BUILD_COMMIT}" npm run build

FROM ${NODE_IMAGE} AS runtime
# Production's rules: a missing UPSTREAM_URL or GATEWAY_SECRET stops start-up, GraphiQL is off,
# /metrics moves to port 9464 (docs/deploy.md "Production settings").
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and read-only to the user that runs them.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/dist ./dist
# The base image's unprivileged `node` user, by number so Kubernetes' runAsNonRoot can check it.
USER 1000:1000
EXPOSE 4000 9464
# node itself is PID 1 and receives SIGTERM, which drains (docs/deploy.md "Shutdown"); stdout
# carries only the JSON log lines.
CMD ["node", "dist/main.js"]
