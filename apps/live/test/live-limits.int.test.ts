import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BAD_TOKENS_PER_ADDRESS, createTenant, type TestServer, testServer } from '@ukiyo/server/testing';
import { apiToken, startLive, type LiveUnderTest } from './helpers.ts';

const LIST = 'ImageFlux_20200729.ListChannelIDs';
const PLAYLISTS = 'ImageFlux_20200207.ListPlaylistURLs';
const CREATE = 'ImageFlux_20200316.CreateMultistreamChannel';

describe('live API and WHIP rate limits', () => {
  let server: TestServer;
  let live: LiveUnderTest;
  let organizationId: number;

  beforeAll(async () => {
    server = await testServer();
    // Behind a proxy, so each test speaks from an address of its own.
    live = await startLive(server, {}, { TRUST_PROXY: true, LIVE_API_RATE_PER_MINUTE: 3 });
    organizationId = (await createTenant(server.deps, { isLive: true })).organizationIds[0]!;
  });

  afterAll(async () => {
    await live.live.close();
  });

  /**
   * An address of 198.19.0.0/16, which no other test file speaks from: the files of a worker share
   * one server and its limits, and api-v1's requests from 203.0.113.1, .2, … each spent a bad
   * token of the address this test drew there (19 × 401 then 429, in CI).
   */
  const randomAddress = () =>
    `198.19.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;

  async function liveCall(token: string | undefined, address: string, target = LIST, body: unknown = {}) {
    const response = await fetch(`${live.baseUrl}/`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Sora-Target': target,
        'X-Forwarded-For': address,
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as object };
  }

  function whip(method: 'POST' | 'DELETE', path: string, token: string, address: string) {
    return fetch(`${live.baseUrl}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        'X-Forwarded-For': address,
        ...(method === 'POST' ? { 'Content-Type': 'application/sdp' } : {}),
      },
      ...(method === 'POST' ? { body: 'not an offer' } : {}),
    });
  }

  it('answers a valid token from an address that sent 25 bad ones, on the live and the public API', async () => {
    const address = randomAddress();
    const token = await apiToken(server, organizationId);
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await liveCall(`bad-${i}`, address)).status);
    // Compared whole, so that a failure shows every status.
    const { points } = BAD_TOKENS_PER_ADDRESS;
    expect(statuses).toEqual([...Array(points).fill(401), ...Array(25 - points).fill(429)]);

    expect(await liveCall(token, address)).toMatchObject({
      status: 200,
      body: { channel_ids: expect.any(Array) },
    });
    // The bad-token budget of an address is one for both APIs; the valid token passes on both.
    const publicApi = await server.withConfig({ TRUST_PROXY: true });
    const info = await fetch(`${publicApi}/api/token.info`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'X-Forwarded-For': address },
    });
    expect(info.status).toBe(200);
    const bad = await fetch(`${publicApi}/api/token.info`, {
      method: 'POST',
      headers: { Authorization: 'Bearer bad', 'X-Forwarded-For': address },
    });
    expect(bad.status).toBe(429);
  });

  it('keeps WHIP working for a token that polled the live API past its budget', async () => {
    const address = randomAddress();
    const token = await apiToken(server, organizationId);
    const created = await liveCall(token, address, CREATE, {});
    expect(created.status).toBe(200);
    const channel = (created.body as { channel_id: string }).channel_id;
    for (let i = 0; i < 2; i++) {
      const polled = await liveCall(token, address, PLAYLISTS, { channel_id: channel });
      expect(polled.status).toBe(200);
      expect(polled.headers.get('ratelimit-limit')).toBe('3');
    }
    const limited = await liveCall(token, address, PLAYLISTS, { channel_id: channel });
    expect(limited).toMatchObject({ status: 429, body: { ok: false, error: 'too many requests' } });
    expect(limited.headers.get('retry-after')).toBe('60');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');

    // Past the auth: no session to end, no offer to answer; never 429.
    const ended = await whip('DELETE', `/whip/${channel}/0123abcd`, token, address);
    expect(ended.status).toBe(404);
    expect(ended.headers.get('ratelimit-remaining')).toBe('59');
    expect((await whip('POST', `/whip/${channel}`, token, address)).status).toBe(400);
  });
});
