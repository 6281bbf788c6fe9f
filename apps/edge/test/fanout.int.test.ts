import { mkdtempSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PrivateRedis, until } from '../../server/test/processes.ts';
import { CacheRequester, FanOut } from '../src/fanout.ts';

// The purge log: an edge that is not subscribed when a purge goes out (Redis restarting, a
// network blip) applies it once it is back. One edge reaches Redis through a Link the test
// cuts, so which purges it misses is decided by the test, not by reconnection timing.
const skipReason = PrivateRedis.available()
  ? ''
  : 'needs redis-server on PATH (the test runs a private Redis)';
if (skipReason) console.warn(`fanout.int.test.ts skipped: ${skipReason}`);

const log = pino({ level: 'silent' });
const ORIGIN = 7;

/** A TCP hop between one edge and Redis that the test can cut, as a network blip would. */
class Link {
  private readonly sockets = new Set<Socket>();
  private cut = false;
  private server!: Server;
  port = 0;

  constructor(private readonly redis: PrivateRedis) {}

  async start(): Promise<void> {
    this.server = createServer((client) => {
      if (this.cut) return client.destroy();
      const upstream = connect(this.redis.port, '127.0.0.1');
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        this.sockets.add(from);
        from.pipe(to);
        from.on('error', () => to.destroy());
        from.on('close', () => {
          this.sockets.delete(from);
          to.destroy();
        });
      }
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  sever(): void {
    this.cut = true;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.cut = false;
  }

  async close(): Promise<void> {
    this.sever();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** A FanOut whose handlers note every purge they are asked to apply. */
class RecordingEdge {
  readonly applied: string[] = [];
  readonly fanOut: FanOut;

  constructor(url: string, appliedLogFile?: string) {
    this.fanOut = new FanOut(
      url,
      {
        purge: async (originId, imagePath) => this.applied.push(`purge ${originId} ${imagePath}`),
        originsChanged: async () => undefined,
        cache: async (originId, url, remove) => {
          if (remove) this.applied.push(`cache purge ${originId} ${url}`);
          return [url];
        },
        purgePrefix: async (originId, pathPrefix) => {
          this.applied.push(`prefix purge ${originId} ${pathPrefix}`);
          return 1;
        },
      },
      log,
      appliedLogFile,
    );
  }

  /** Waits until this edge has applied `purge`, and answers how many times it has. */
  async timesApplied(purge: string): Promise<number> {
    await until(`applied ${purge}`, async () => (this.applied.includes(purge) ? true : undefined), 10_000);
    return this.applied.filter((seen) => seen === purge).length;
  }
}

describe.skipIf(skipReason !== '')('fan-out purge log', () => {
  const redis = new PrivateRedis();
  const link = new Link(redis);
  let near: RecordingEdge;
  let far: RecordingEdge;
  let requester: CacheRequester;

  beforeAll(async () => {
    await redis.start();
    await link.start();
  });

  afterEach(async () => {
    await Promise.all([near.fanOut.close(), far.fanOut.close(), requester.close()]);
  });

  afterAll(async () => {
    await link.close();
    await redis.stop();
  });

  /** Edge "near" and the console's requester reach Redis directly, edge "far" through the link. */
  async function startFleet(): Promise<void> {
    link.restore();
    near = new RecordingEdge(redis.url);
    far = new RecordingEdge(link.url);
    requester = new CacheRequester(redis.url, log, 2_000);
    await Promise.all([near.fanOut.start(), far.fanOut.start()]);
    await until('requester connected', async () => (requester.connected ? true : undefined));
  }

  async function cutFar(): Promise<void> {
    link.sever();
    await until('far edge cut off', async () => (far.fanOut.connected ? undefined : true));
  }

  it('an edge cut off during purges applies them when it is back, and live ones only once', async () => {
    await startFleet();
    await near.fanOut.publishPurge(ORIGIN, { imagePath: '/live.jpg' });
    expect(await far.timesApplied(`purge ${ORIGIN} /live.jpg`)).toBe(1);

    await cutFar();
    // The console's purge returns once every subscribed edge has answered: "near" alone.
    expect(await requester.purge(ORIGIN, 'http://img.example/a.jpg')).toEqual(['http://img.example/a.jpg']);
    await near.fanOut.publishPurge(ORIGIN, { imagePath: '/b.jpg' });
    expect(far.applied).toEqual([`purge ${ORIGIN} /live.jpg`]);

    link.restore();
    expect(await far.timesApplied(`cache purge ${ORIGIN} http://img.example/a.jpg`)).toBe(1);
    expect(await far.timesApplied(`purge ${ORIGIN} /b.jpg`)).toBe(1);
    // The missed purges came in one read from the id of the last purge heard live: had that
    // id not been recorded, /live.jpg would have been applied again in the same read.
    expect(far.applied.filter((purge) => purge.endsWith('/live.jpg'))).toHaveLength(1);
    // An edge never replays its own purges, and a lookup is not a purge.
    expect(near.applied).toEqual([`cache purge ${ORIGIN} http://img.example/a.jpg`]);
    expect(await requester.lookup(ORIGIN, 'http://img.example/c.jpg')).toEqual(['http://img.example/c.jpg']);
  });

  it('purges by path prefix reach every edge, answered by all, and are caught up on after a cut', async () => {
    await startFleet();
    // Each recording edge says it held one image: the console's call adds up every edge's.
    expect(await requester.purgePrefix(ORIGIN, '/photos/')).toBe(2);
    expect(near.applied).toEqual([`prefix purge ${ORIGIN} /photos/`]);
    expect(far.applied).toEqual([`prefix purge ${ORIGIN} /photos/`]);

    await cutFar();
    expect(await requester.purgePrefix(ORIGIN, '/')).toBe(1);
    await near.fanOut.publishPurge(ORIGIN, { pathPrefix: '/banners/' });
    link.restore();
    expect(await far.timesApplied(`prefix purge ${ORIGIN} /`)).toBe(1);
    expect(await far.timesApplied(`prefix purge ${ORIGIN} /banners/`)).toBe(1);
    expect(near.applied).not.toContain(`prefix purge ${ORIGIN} /banners/`);
  });

  it('after a Redis restart an edge applies the purges made before it reconnected', async () => {
    await startFleet();
    await cutFar();
    await redis.stop();
    await redis.start();
    // The restarted Redis kept nothing (no persistence): the log starts again, with later ids.
    // Retried as the console's user would while the requester and "near" reconnect.
    await until(
      'purge answered',
      async () => requester.purge(ORIGIN, 'http://img.example/restart.jpg').catch(() => undefined),
      10_000,
      100,
    );

    link.restore();
    expect(await far.timesApplied(`cache purge ${ORIGIN} http://img.example/restart.jpg`)).toBeGreaterThan(0);
  });

  it('a fresh edge starts at the end of the log and does not replay older purges', async () => {
    await startFleet();
    await near.fanOut.publishPurge(ORIGIN, { imagePath: '/old.jpg' });
    const late = new RecordingEdge(redis.url);
    try {
      await late.fanOut.start();
      await near.fanOut.publishPurge(ORIGIN, { imagePath: '/new.jpg' });
      expect(await late.timesApplied(`purge ${ORIGIN} /new.jpg`)).toBe(1);
      expect(late.applied).toEqual([`purge ${ORIGIN} /new.jpg`]);
    } finally {
      await late.fanOut.close();
    }
  });

  it('an edge restarted with its cache applies the purges made while it was down', async () => {
    await startFleet();
    const file = join(mkdtempSync(join(tmpdir(), 'ukiyo-purge-log-')), 'purge-log-position');
    // Through the link, so that cutting it stops the edge as a crash would, messages in flight included.
    const crashed = new RecordingEdge(link.url, file);
    await crashed.fanOut.start();
    await near.fanOut.publishPurge(ORIGIN, { imagePath: '/before.jpg' });
    expect(await crashed.timesApplied(`purge ${ORIGIN} /before.jpg`)).toBe(1);
    link.sever();
    await crashed.fanOut.close();

    await near.fanOut.publishPurge(ORIGIN, { imagePath: '/while-down.jpg' });
    const restarted = new RecordingEdge(redis.url, file);
    try {
      await restarted.fanOut.start();
      expect(await restarted.timesApplied(`purge ${ORIGIN} /while-down.jpg`)).toBe(1);
      expect(restarted.applied).toEqual([`purge ${ORIGIN} /while-down.jpg`]);
    } finally {
      await restarted.fanOut.close();
    }
  });
});
