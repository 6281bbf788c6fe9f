import { ALL_MEMBER_PERMISSIONS, Permission } from '@ukiyo/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Client,
  createTenant,
  createTestUser,
  issuePublishCredential,
  loggedIn,
  PUBLISH_CREDENTIAL_SECONDS,
  type TestServer,
  testServer,
} from '@ukiyo/server/testing';
import { startLive, waitFor, type LiveUnderTest } from './helpers.ts';
import { publish } from './publisher.ts';

const rendition = { durationSeconds: 1, video: { width: 320, height: 240, fps: 15, bps: 300_000 } };

// The console's browser publisher: a credential from the ui-api in place of an API token on WHIP.
describe('publish credentials', () => {
  let server: TestServer;
  let live: LiveUnderTest;
  let owner: Client;
  let organizationId: number;
  let channelId: string;
  let otherChannelId: string;

  async function member(permission: number): Promise<{ client: Client; organizationId: number }> {
    const tenant = await createTenant(server.deps, { isLive: true });
    const user = await createTestUser(server.deps, { accountId: tenant.accountId, permission });
    return { client: await loggedIn(server.baseUrl, user.email), organizationId: tenant.organizationIds[0]! };
  }

  const addChannel = async (client: Client) =>
    ((await client.call('channel.add', { hls: [rendition] })).body.channel as { id: string }).id;

  const credentialFor = async (client: Client, id: string) => {
    const answer = await client.call('channel.publish_credential', { channelId: id });
    expect(answer.status).toBe(200);
    return answer.body as { credential: string; expiresAt: string };
  };

  /** A WHIP POST that passes the auth only to be refused for its body (400): no media needed. */
  const postWhip = (id: string, credential: string) =>
    fetch(`${live.baseUrl}/whip/${id}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${credential}`, 'Content-Type': 'application/sdp' },
      body: 'not an offer',
    });

  beforeAll(async () => {
    server = await testServer();
    live = await startLive(server);
    ({ client: owner, organizationId } = await member(ALL_MEMBER_PERMISSIONS));
    channelId = await addChannel(owner);
    otherChannelId = await addChannel(owner);
  });

  afterAll(async () => {
    await live.live.close();
  });

  it('issues a ten-minute credential to a member holding the channel permission', async () => {
    const before = Date.now();
    const { credential, expiresAt } = await credentialFor(owner, channelId);
    const after = Date.now();
    expect(credential).toMatch(/^ukp1\./);
    // Issued at some moment between the two readings, in whole seconds.
    const expires = new Date(expiresAt).getTime();
    expect(expires - before).toBeGreaterThan((PUBLISH_CREDENTIAL_SECONDS - 2) * 1000);
    expect(expires - after).toBeLessThanOrEqual(PUBLISH_CREDENTIAL_SECONDS * 1000);
  });

  it('refuses a member without the channel permission and another organization’s channel', async () => {
    const { client: viewer } = await member(ALL_MEMBER_PERMISSIONS & ~Permission.channel);
    const refused = await viewer.call('channel.publish_credential', { channelId });
    expect(refused.body.error).toBe('not enough permission');

    const { client: outsider } = await member(ALL_MEMBER_PERMISSIONS);
    const foreign = await outsider.call('channel.publish_credential', { channelId });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe('not found');
  });

  it('publishes to its channel and ends the session with DELETE', async () => {
    const { credential } = await credentialFor(owner, channelId);
    const publisher = await publish({
      whipUrl: `${live.baseUrl}/whip/${channelId}`,
      token: credential,
      codec: 'vp8',
      width: 320,
      height: 240,
      fps: 15,
      audio: false,
    });
    try {
      expect(publisher.status).toBe(201);
      expect(publisher.location).toMatch(new RegExp(`^/whip/${channelId}/[0-9a-f]+$`));
      const listed = async () =>
        (
          (await owner.call('channel.list')).body.channels as { id: string; activeConnectionCount: number }[]
        ).find((channel) => channel.id === channelId)!.activeConnectionCount;
      await waitFor(async () => ((await listed()) === 1 ? true : undefined), 5000, 'the connection');

      const ended = await fetch(new URL(publisher.location!, live.baseUrl), {
        method: 'DELETE',
        headers: { Authorization: `Bearer ${credential}` },
      });
      expect(ended.status).toBe(200);
      await waitFor(async () => ((await listed()) === 0 ? true : undefined), 5000, 'the disconnection');
    } finally {
      await publisher.stop(false);
    }
  });

  it('is refused for another channel, after expiry and when tampered with', async () => {
    const { credential } = await credentialFor(owner, channelId);
    const other = await postWhip(otherChannelId, credential);
    expect(other.status).toBe(403);
    expect(await other.json()).toEqual({ ok: false, error: 'the publish credential is for another channel' });
    const otherDelete = await fetch(`${live.baseUrl}/whip/${otherChannelId}/0123abcd`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${credential}` },
    });
    expect(otherDelete.status).toBe(403);

    const expired = issuePublishCredential(
      server.deps.secrets,
      organizationId,
      channelId,
      Date.now() - PUBLISH_CREDENTIAL_SECONDS * 1000 - 1000,
    ).credential;
    const late = await postWhip(channelId, expired);
    expect(late.status).toBe(401);
    expect(await late.json()).toEqual({ ok: false, error: 'invalid or expired publish credential' });

    // Another channel named in the claims, the signature kept.
    const [prefix, payload, signature] = credential.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, c: otherChannelId })).toString('base64url');
    expect((await postWhip(otherChannelId, `${prefix}.${forged}.${signature}`)).status).toBe(401);
    // A different character in place of the one before last (the last one has unused bits).
    const flipped = `${credential.slice(0, -2)}${credential.at(-2) === 'A' ? 'B' : 'A'}${credential.at(-1)}`;
    expect((await postWhip(channelId, flipped)).status).toBe(401);

    // Untouched, it still passes the auth (and only the offer is refused).
    expect((await postWhip(channelId, credential)).status).toBe(400);
  });

  it('is not an API token: the live API refuses it', async () => {
    const { credential } = await credentialFor(owner, channelId);
    const listed = await live.call('ImageFlux_20200729.ListChannelIDs', {}, credential);
    expect(listed).toMatchObject({ status: 401, body: { ok: false, error: 'invalid or missing API token' } });
    const playlists = await live.call(
      'ImageFlux_20200207.ListPlaylistURLs',
      { channel_id: channelId },
      credential,
    );
    expect(playlists.status).toBe(401);
  });

  it('stops working when the channel is deleted or the organization is no longer live', async () => {
    const { client, organizationId: ownId } = await member(ALL_MEMBER_PERMISSIONS);
    const first = await addChannel(client);
    const second = await addChannel(client);
    const forFirst = (await credentialFor(client, first)).credential;
    const forSecond = (await credentialFor(client, second)).credential;

    await server.deps.db
      .updateTable('channels')
      .set({ deleted_at: new Date() })
      .where('id', '=', first)
      .execute();
    expect((await postWhip(first, forFirst)).status).toBe(401);

    await server.deps.db
      .updateTable('organizations')
      .set({ is_live: false })
      .where('id', '=', ownId)
      .execute();
    const notLive = await postWhip(second, forSecond);
    expect(notLive.status).toBe(403);
    expect(((await notLive.json()) as { error: string }).error).toMatch(/live streaming/);
  });

  it('has a WHIP budget of its own', async () => {
    const first = (await credentialFor(owner, channelId)).credential;
    const second = (await credentialFor(owner, channelId)).credential;
    const limit = Number((await postWhip(channelId, first)).headers.get('ratelimit-limit'));
    expect(limit).toBe(server.deps.config.WHIP_RATE_PER_MINUTE);
    expect((await postWhip(channelId, first)).headers.get('ratelimit-remaining')).toBe(String(limit - 2));
    expect((await postWhip(channelId, second)).headers.get('ratelimit-remaining')).toBe(String(limit - 1));
  });
});
