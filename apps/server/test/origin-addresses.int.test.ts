import { OriginKind, Permission } from '@ukiyo/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, createTestUser, loggedIn, testServer, type Client } from './harness.ts';

/**
 * Origins and webhooks on private addresses are refused when saved (ALLOW_PRIVATE_ORIGINS
 * unset), not only when the edge or live first connects.
 */
let guarded: string;
let permissive: string;
beforeAll(async () => {
  const server = await testServer();
  permissive = server.baseUrl;
  guarded = await server.withConfig({ ALLOW_PRIVATE_ORIGINS: false });
});

async function member(baseUrl: string, options: { isLive?: boolean } = {}): Promise<Client> {
  const server = await testServer();
  const tenant = await createTenant(server.deps, { isLive: options.isLive ?? false });
  await server.deps.db
    .updateTable('organizations')
    .set({ plan: 4 })
    .where('id', '=', tenant.organizationIds[0]!)
    .execute();
  const { email } = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: Permission.origin | Permission.channel,
  });
  return loggedIn(baseUrl, email);
}

const httpOrigin = (host: string, originID = -1) => ({
  origin: {
    originID,
    kind: OriginKind.http,
    config: { scheme: 'http', host, pathPrefix: '', rewriteHost: '' },
  },
});

const s3Origin = (endPoint: string) => ({
  origin: {
    kind: OriginKind.s3,
    config: {
      accessKeyID: 'AKIA',
      secretAccessKey: 'secret',
      endPoint,
      region: '',
      bucket: 'images',
      pathPrefix: '',
    },
  },
});

const refusedAt = (field: string) => ({
  status: 400,
  body: { error: 'validation error', invalids: { [field]: ['validation.privateAddress'] } },
});

describe('origins on private addresses', () => {
  it('refuses private, loopback, link-local, CGNAT and tunnelled hosts on origin.add', async () => {
    const client = await member(guarded);
    const refused = [
      '127.0.0.1:8080',
      '10.0.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '2130706433',
      'localhost',
      '[::1]',
      '[::ffff:127.0.0.1]:8080',
      '[2002:7f00:1::1]',
      '[2001:0:4136:e378:8000:63bf:3fff:fdd2]',
      '[fe80::1]',
      '[fd00::1]',
    ];
    for (const host of refused) {
      expect(await client.call('origin.add', httpOrigin(host)), host).toMatchObject(
        refusedAt('origin.config.host'),
      );
    }
  });

  it('accepts public address literals, IPv6 included, and names that do not resolve yet', async () => {
    const client = await member(guarded);
    for (const host of [
      '[2606:4700:4700::1111]',
      '[2606:4700:4700::1111]:8443',
      '8.8.8.8',
      'images.ukiyo.invalid',
    ]) {
      const added = await client.call('origin.add', httpOrigin(host));
      expect(added.status, `${host}: ${JSON.stringify(added.body)}`).toBe(200);
    }
  });

  it('refuses moving an origin onto a private host with origin.update', async () => {
    const client = await member(guarded);
    const added = await client.call('origin.add', httpOrigin('8.8.8.8'));
    const { originID } = added.body.origin as { originID: number };
    expect(await client.call('origin.update', httpOrigin('192.168.1.10', originID))).toMatchObject(
      refusedAt('origin.config.host'),
    );
  });

  it("refuses an S3 origin's custom endpoint on a private address", async () => {
    const client = await member(guarded);
    expect(await client.call('origin.add', s3Origin('http://10.1.2.3:9000'))).toMatchObject(
      refusedAt('origin.config.endPoint'),
    );
    expect((await client.call('origin.add', s3Origin('https://8.8.8.8'))).status).toBe(200);
  });

  it('allows loopback origins with ALLOW_PRIVATE_ORIGINS=1', async () => {
    const client = await member(permissive);
    expect((await client.call('origin.add', httpOrigin('127.0.0.1:8080'))).status).toBe(200);
  });

  it("refuses a channel's webhooks on private addresses", async () => {
    const client = await member(guarded, { isLive: true });
    const hls = [{ video: { width: 640, height: 360 } }];
    const refused = await client.call('channel.add', {
      hls,
      authWebhookUrl: 'http://169.254.169.254/latest/meta-data/',
      eventWebhookUrl: 'http://[::1]:9000/events',
    });
    expect(refused).toMatchObject({
      status: 400,
      body: {
        invalids: {
          authWebhookUrl: ['validation.privateAddress'],
          eventWebhookUrl: ['validation.privateAddress'],
        },
      },
    });
    const accepted = await client.call('channel.add', { hls, eventWebhookUrl: 'https://8.8.8.8/events' });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  });
});
