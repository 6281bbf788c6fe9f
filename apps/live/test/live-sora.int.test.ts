import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createTenant, type TestServer, testServer } from '@ukiyo/server/testing';
import {
  apiToken,
  startLive,
  startStarvable,
  starveUntilShed,
  type LiveUnderTest,
  VIEWER_PROCESS,
} from './helpers.ts';
import { publish } from './publisher.ts';
import { soraViewer } from './sora-viewer.ts';

const CREATE = 'ImageFlux_20200316.CreateMultistreamChannelWithHLS';

/** What the server said before closing: its messages, then the close code and reason. */
interface Closed {
  messages: Record<string, unknown>[];
  code: number;
  reason: string;
}

describe('Sora signaling: what is refused, and how', () => {
  let server: TestServer;
  let live: LiveUnderTest;
  let token: string;
  let channelId: string;

  /** Opens the signaling socket, sends `messages` (JSON unless strings) and waits for its close. */
  const converse = (messages: unknown[], path = '/signaling') =>
    new Promise<Closed>((resolve, reject) => {
      const ws = new WebSocket(`${live.baseUrl.replace(/^http/, 'ws')}${path}`);
      const received: Record<string, unknown>[] = [];
      ws.on('open', () => {
        for (const message of messages)
          ws.send(typeof message === 'string' ? message : JSON.stringify(message));
      });
      ws.on('message', (data) => received.push(JSON.parse(data.toString()) as Record<string, unknown>));
      ws.on('close', (code, reason) => resolve({ messages: received, code, reason: reason.toString() }));
      ws.on('error', reject);
    });
  const connect = (overrides: Record<string, unknown> = {}) => ({
    type: 'connect',
    role: 'sendonly',
    channel_id: channelId,
    metadata: { access_token: token },
    ...overrides,
  });

  beforeAll(async () => {
    server = await testServer();
    live = await startLive(server, { sora: { handshakeMs: 500, pingMs: 5_000 } }, VIEWER_PROCESS);
    const tenant = await createTenant(server.deps, { isLive: true });
    token = await apiToken(server, tenant.organizationIds[0]!);
    const created = await live.call(CREATE, { hls: [{ video: { width: 320, height: 180 } }] }, token);
    channelId = created.body.channel_id as string;
  });

  afterAll(async () => {
    await live?.live.close();
  });

  it('closes with 4000 + the HTTP status WHIP would answer, and the reason', async () => {
    const cases: [unknown, number, RegExp][] = [
      ['not json', 4400, /valid connect message/],
      [connect({ role: 'sendrecv' }), 4400, /role sendrecv is not supported/],
      // A viewer of a channel nobody publishes to.
      [connect({ role: 'recvonly' }), 4404, /the channel is not on air/],
      [connect({ video: false }), 4400, /must send video/],
      [connect({ video: { codec_type: 'VP9' } }), 4400, /H264 or VP8/],
      [connect({ audio: { codec_type: 'AAC' } }), 4400, /OPUS/],
      [connect({ metadata: { access_token: 'nope' } }), 4401, /invalid or missing API token/],
      [connect({ metadata: undefined }), 4401, /invalid or missing API token/],
      [connect({ channel_id: 'ab'.repeat(16) }), 4404, /no such channel/],
    ];
    for (const [message, code, reason] of cases) {
      const closed = await converse([message]);
      expect({ code: closed.code, reason: closed.reason }).toEqual({
        code,
        reason: expect.stringMatching(reason),
      });
      expect(closed.messages).toEqual([]);
    }
  });

  it('gives a client that never sends connect its handshake time only', async () => {
    const started = Date.now();
    const closed = await converse([]);
    expect(closed.code).toBe(4408);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('offers to a valid sendonly connect, and ends the attempt when no answer comes', async () => {
    const closed = await converse([connect({ video: { codec_type: 'VP8' } })]);
    const offer = closed.messages.find((message) => message.type === 'offer');
    expect(offer).toMatchObject({
      type: 'offer',
      mid: { video: expect.any(String), audio: expect.any(String) },
    });
    // VP8 asked for: offered first; our candidates are in the offer (no trickle from us).
    expect(offer!.sdp).toMatch(/^m=video \d+ [\w/]+ (\d+)[\s\S]*?a=rtpmap:\1 VP8\/90000/m);
    expect(offer!.sdp).toMatch(/^a=candidate:/m);
    expect(offer!.sdp).toMatch(/^a=recvonly/m);
    expect(closed).toMatchObject({ code: 4408, reason: 'no answer to the offer' });
    // The channel is free again.
    const row = await server.deps.db
      .selectFrom('channels')
      .select(['active_connections', 'connection_id'])
      .where('id', '=', channelId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ active_connections: 0, connection_id: null });
  });

  it('answers other WebSocket paths with 404', async () => {
    await expect(converse([], '/whip/x')).rejects.toThrow(/404/);
  });
});

describe('Sora signaling recvonly: a viewer shed for want of room', () => {
  let server: TestServer;
  let live: LiveUnderTest;

  beforeAll(async () => {
    server = await testServer();
    live = await startStarvable(server);
  });

  afterAll(async () => {
    await live?.live.close();
  });

  it('is closed with 4503 and the reason once the thread stays saturated', async () => {
    const tenant = await createTenant(server.deps, { isLive: true });
    const token = await apiToken(server, tenant.organizationIds[0]!);
    const created = await live.call(CREATE, { hls: [{ video: { width: 320, height: 180 } }] }, token);
    const channelId = created.body.channel_id as string;
    const publisher = await publish({
      whipUrl: `${live.baseUrl}/whip/${channelId}`,
      token,
      codec: 'h264',
      width: 320,
      height: 180,
      fps: 15,
    });
    const viewer = soraViewer(`${live.baseUrl.replace(/^http/, 'ws')}/signaling`, { channel_id: channelId });
    try {
      expect(publisher.status).toBe(201);
      await viewer.connected;
      expect(await starveUntilShed(live)).toBe(1);
      await expect(viewer.closed).resolves.toEqual({
        code: 4503,
        reason: 'this live server has no room for its WebRTC viewers now; HLS plays',
      });
    } finally {
      await viewer.leave();
      await publisher.stop();
    }
  });
});
