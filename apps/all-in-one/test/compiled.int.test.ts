import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { fork } from 'node:child_process';
import { API_VERSION } from '@ukiyo/contract';
import { AppProcess, get, processEnv, ROOT, testDatabaseUrl } from '@ukiyo/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RTCPeerConnection, useH264 } from 'werift';
import { init } from '../../live/src/testing/fmp4.ts';
import { frameOf, MEDIA_PIPE_FD, type MediaMessage } from '../../live/src/viewers/media-pipe.ts';
import { TEST_VIEWER_SETTINGS } from '../../live/src/testing/viewer-settings.ts';
import type { FromViewerProcess, ToViewerProcess } from '../../live/src/viewers/viewer-process.ts';

// Production runs the bundles of scripts/build.mjs with plain `node`, no TypeScript loader: the
// all-in-one and an edge alone start from dist/ and reach the files they read at run time (the
// embedded database's worker, the sample images) from there; live's viewer processes (WebRTC
// viewers, LL-HLS connections) start from their own bundle. On embedded PGlite, each in its
// own DATA_DIR, or on the run's PostgreSQL database when DATABASE_URL is set.
const databaseUrl = testDatabaseUrl();
// A first start migrates a fresh database: on a busy machine it takes up to the minute that
// AppProcess.ready waits, more than the suite's default test timeout.
const STARTING_MS = 75_000;
/**
 * What the edge's bundle must not import at start-up: the console's own dependencies (jobs,
 * mail, sign-in, its HTTP app) and the S3 SDK, which it loads at its first S3 origin.
 */
const NOT_AT_EDGE_START = [
  'pg-boss',
  'nodemailer',
  '@node-rs/argon2',
  'otpauth',
  'qrcode',
  'rate-limiter-flexible',
  'hono',
  '@hono/node-server',
  '@aws-sdk/client-s3',
];

describe('compiled entries', () => {
  let app: AppProcess;
  let edge: AppProcess;
  const start = async (name: string, entry: string) => {
    const env = await processEnv({ ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}), DEMO: '0' });
    return new AppProcess(name, entry, env).start();
  };

  // Both start at once; each test waits for its own.
  beforeAll(async () => {
    const build = spawnSync(process.execPath, ['scripts/build.mjs', 'all-in-one', 'edge'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(build.status, build.stderr).toBe(0);
    [app, edge] = await Promise.all([
      start('all-in-one', 'dist/all-in-one.js'),
      start('edge', 'dist/edge.js'),
    ]);
  });
  afterAll(async () => {
    await Promise.all([app?.stop(), edge?.stop()]);
  });

  it(
    'starts the all-in-one, which answers its probes and the ui-api',
    async () => {
      await app.ready();
      const health = await get(Number(app.env.PORT), 'localhost', '/healthz');
      expect(JSON.parse(health.body.toString())).toEqual({ status: 'alive' });
      const whoami = await fetch(
        `http://127.0.0.1:${app.env.PORT}/.ui-api/user.whoami?api-version=${API_VERSION}`,
        {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Requested-With': 'XMLHttpRequest' },
          body: '{}',
        },
      );
      expect(whoami.status).toBe(200);
    },
    STARTING_MS,
  );

  it(
    'starts an edge alone, which converts a sample image',
    async () => {
      await edge.ready();
      const image = await get(Number(edge.env.EDGE_PORT), 'samples.img.localhost', '/c/w=64/fuji.jpg');
      expect(image.status, image.body.toString()).toBe(200);
      expect(image.headers['content-type']).toBe('image/jpeg');
    },
    STARTING_MS,
  );

  it('starts the edge with only what it runs: each collection marks what was loaded', () => {
    const bundle = readFileSync(join(ROOT, 'dist/edge.js'), 'utf8');
    // `from "x"` and `import "x"`, not the dynamic `import("x")`.
    const imported = [...bundle.matchAll(/\bfrom\s*"([^".][^"]*)"|\bimport\s*"([^".][^"]*)"/g)].map(
      ([, from, bare]) => from ?? bare,
    );
    expect(imported).toContain('sharp');
    for (const name of NOT_AT_EDGE_START) expect(imported, name).not.toContain(name);
  });

  it('runs the bundled viewer process, which answers a WebRTC viewer offer and an LL-HLS connection', async () => {
    // As processes.ts forks it: descriptor 4 is its media pipe.
    const child = fork(join(ROOT, 'dist/live-viewers.js'), [JSON.stringify(TEST_VIEWER_SETTINGS)], {
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc', 'pipe'],
    });
    const viewer = new RTCPeerConnection({
      codecs: { video: [useH264()] },
      iceAdditionalHostAddresses: ['127.0.0.1'],
    });
    try {
      viewer.addTransceiver('video', { direction: 'recvonly' });
      await viewer.setLocalDescription(await viewer.createOffer());
      const send = (message: ToViewerProcess) => child.send(message);
      const replied = new Promise<FromViewerProcess>((resolve) =>
        child.on('message', (message: FromViewerProcess) => message.type === 'reply' && resolve(message)),
      );
      send({
        type: 'open',
        viewer: 'v',
        broadcast: {
          id: 'b',
          streamId: 's',
          video: {
            mimeType: 'video/H264',
            clockRate: 90_000,
            payloadType: 96,
            parameters: 'level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f',
          },
          rungs: 1,
          audio: undefined,
        },
      });
      send({ type: 'call', call: 1, viewer: 'v', method: 'answer', argument: viewer.localDescription!.sdp });
      expect(await replied).toMatchObject({
        type: 'reply',
        call: 1,
        result: expect.stringContaining('a=sendonly'),
      });

      // A rendition mirrored over the media pipe, and a viewer's connection handed over with its
      // first request: the child answers it from the mirror.
      const media = child.stdio[MEDIA_PIPE_FD] as Writable;
      const options = { targetDuration: 1, partTarget: 0.2, windowSegments: 6, windowBytes: 1 << 20 };
      const rendition = {
        key: 'c/d/0',
        channelId: 'c',
        connectionId: 'd',
        organizationId: 1,
        targetDuration: 1,
        options,
      };
      for (const message of [
        { type: 'hls-open', rendition },
        { type: 'hls-bytes', key: 'c/d/0', bytes: init() },
      ] satisfies MediaMessage[])
        for (const part of frameOf(message)) media.write(part);
      const listener = createServer();
      await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
      const accepted = once(listener, 'connection') as Promise<[Socket]>;
      const port = (listener.address() as { port: number }).port;
      const viewerSocket = connect(port, '127.0.0.1');
      const [socket] = await accepted;
      const request = 'GET /hls/c/d/0/init.mp4 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
      const answer = new Promise<string>((resolve) =>
        viewerSocket.on('data', (chunk: Buffer) => resolve(chunk.toString('latin1'))),
      );
      const handOver = (connection: Socket) =>
        child.send(
          { type: 'hls-connection', head: Buffer.from(request) } satisfies ToViewerProcess,
          connection,
        );
      // The media pipe and the IPC channel are two streams: on a busy machine the connection can
      // reach the child before the rendition does. The child then gives it back, for the live
      // process to answer; here it is handed over again until the child has the rendition.
      child.on('message', (message: FromViewerProcess, returned?: Socket) => {
        if (message.type === 'hls-return' && returned) setTimeout(() => handOver(returned), 10);
      });
      handOver(socket);
      expect(await answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*Content-Type: video\/mp4\r\n[^]*ftyp/);
      viewerSocket.destroy();
      listener.close();
    } finally {
      await viewer.close();
      // As the live process ends it: the process exits when its channel closes.
      child.disconnect();
      await once(child, 'exit');
    }
  });
});
