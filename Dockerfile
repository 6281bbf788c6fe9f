# One image for every Ukiyo process; the command picks the app (see docs/deploy.md):
#   node --import tsx apps/server/src/main.ts         all-in-one (the default)
#   node --import tsx apps/server/src/main-server.ts  console server
#   node --import tsx apps/edge/src/main.ts           image edge
#   node --import tsx apps/live/src/main.ts           live streaming (WHIP in, HLS out)
# The apps run from TypeScript through tsx, as `npm start` does; only the console is built.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/contract/package.json packages/contract/
COPY packages/imaging/package.json packages/imaging/
COPY apps/server/package.json apps/server/
COPY apps/edge/package.json apps/edge/
COPY apps/live/package.json apps/live/
COPY apps/console/package.json apps/console/
COPY e2e/package.json e2e/
COPY bench/package.json bench/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build:console

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
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
COPY --from=build /app/apps/console/package.json apps/console/
COPY --from=build /app/e2e/package.json e2e/
COPY --from=build /app/bench/package.json bench/
# Production dependencies from the lockfile, plus tsx (a root devDependency) at its locked version.
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm install --no-save --no-audit --no-fund \
      "tsx@$(node -p "require('./package-lock.json').packages['node_modules/tsx'].version")" \
 && npm cache clean --force \
 && mkdir -p /data && chown node:node /data
COPY --from=build /app/tsconfig.base.json ./
COPY --from=build /app/packages ./packages
COPY --from=build /app/apps ./apps
USER node
VOLUME /data
# console, edge HTTP, edge HTTPS (custom domains), live, RTMP ingest, SRT ingest, metrics and probes
EXPOSE 8080 8081 8443 8082 1935 8890/udp 9464
STOPSIGNAL SIGTERM
# Liveness on the operations port (METRICS_PORT, 9464 unless changed): the process answers;
# readiness (/readyz: database, disk, origins) is for the load balancer, not for restarts.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.METRICS_PORT||9464)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--import", "tsx", "apps/server/src/main.ts"]
