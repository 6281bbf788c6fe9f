# One image for every Ukiyo process; the command picks the app (see docs/deploy.md):
#   node dist/all-in-one.js   all-in-one (the default)
#   node dist/server.js       console server
#   node dist/edge.js         image edge
#   node dist/live.js         live streaming (WHIP in, HLS out)
# The build stage compiles each process to one JavaScript file (scripts/build.mjs) and builds the
# console; the image runs them with plain node (the current LTS), no TypeScript loader.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/contract/package.json packages/contract/
COPY packages/imaging/package.json packages/imaging/
COPY apps/server/package.json apps/server/
COPY apps/edge/package.json apps/edge/
COPY apps/live/package.json apps/live/
COPY apps/all-in-one/package.json apps/all-in-one/
COPY apps/console/package.json apps/console/
COPY e2e/package.json e2e/
COPY bench/package.json bench/
# Fixes to dependencies, applied by npm ci's postinstall (patch-package; patches/README.md).
COPY patches patches/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:24-bookworm-slim
# Stack traces name the TypeScript sources (dist/*.js.map).
ENV NODE_ENV=production \
    NODE_OPTIONS=--enable-source-maps \
    HOST=0.0.0.0 \
    DATA_DIR=/data \
    MALLOC_ARENA_MAX=2 \
    UV_THREADPOOL_SIZE=8
WORKDIR /app
# Live streaming encodes the HLS ladder with Debian's ffmpeg; the edge encodes f=mp4 with it.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/packages/contract/package.json packages/contract/
COPY --from=build /app/packages/imaging/package.json packages/imaging/
COPY --from=build /app/apps/server/package.json apps/server/
COPY --from=build /app/apps/edge/package.json apps/edge/
COPY --from=build /app/apps/live/package.json apps/live/
COPY --from=build /app/apps/all-in-one/package.json apps/all-in-one/
COPY --from=build /app/apps/console/package.json apps/console/
COPY --from=build /app/e2e/package.json e2e/
COPY --from=build /app/bench/package.json bench/
COPY --from=build /app/patches patches/
# Production dependencies from the lockfile: the bundles import them from node_modules. The
# processes run as the image's unprivileged `node` user, which owns DATA_DIR and nothing else.
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force \
 && mkdir -p /data && chown node:node /data
COPY --from=build /app/dist ./dist
# What the bundles read at run time, where scripts/build.mjs points them (it lists them).
COPY --from=build /app/apps/server/src/db/pglite-worker.mjs apps/server/src/db/
COPY --from=build /app/apps/edge/samples apps/edge/samples
COPY --from=build /app/apps/console/dist apps/console/dist
USER node
VOLUME /data
# console, edge HTTP, edge HTTPS (custom domains), live, RTMP ingest, SRT ingest, metrics and probes
EXPOSE 8080 8081 8443 8082 1935 8890/udp 9464
STOPSIGNAL SIGTERM
# Liveness on the operations port (METRICS_PORT, 9464 unless changed), which every process of
# the image serves (PORT only the console's): the process answers; readiness (/readyz: database,
# disk, origins) is for the load balancer, not for restarts.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.METRICS_PORT||9464)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/all-in-one.js"]
