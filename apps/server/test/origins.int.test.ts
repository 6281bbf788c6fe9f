import { OriginKind, OriginStatus, Permission } from '@ukiyo/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { ORIGIN_LIST_MAX_AGE_MS } from '../src/services/origin-lists.ts';
import { until } from './processes.ts';
import {
  createTenant,
  createTestUser,
  loggedIn,
  testServer,
  type Client,
  type TestServer,
} from './harness.ts';

let server: TestServer;
beforeAll(async () => {
  server = await testServer();
});

/** A member holding the origin permission in a fresh organization of the given plan. */
async function member(options: { plan?: number; isLive?: boolean; permission?: number } = {}) {
  const tenant = await createTenant(server.deps, { isLive: options.isLive ?? false });
  const organizationId = tenant.organizationIds[0]!;
  if (options.plan !== undefined)
    await server.deps.db
      .updateTable('organizations')
      .set({ plan: options.plan })
      .where('id', '=', organizationId)
      .execute();
  const { email } = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: options.permission ?? Permission.origin,
  });
  return { client: await loggedIn(server.baseUrl, email), organizationId };
}

function httpOrigin(overrides: Record<string, unknown> = {}, config: Record<string, unknown> = {}) {
  return {
    kind: OriginKind.http,
    config: {
      scheme: 'https',
      host: 'images.example.com',
      pathPrefix: '/assets',
      rewriteHost: '',
      ...config,
    },
    ...overrides,
  };
}

async function add(client: Client, origin: Record<string, unknown>) {
  return client.call('origin.add', { origin });
}

type OriginBody = {
  originID: number;
  name: string;
  originName: string;
  status: number;
  signingSecret: string;
  config: Record<string, string>;
  acl: { isAllowList: boolean; cidrs: string[] };
  conversionParameters: Array<{ pattern: string; path: string }>;
};

describe('origin.add', () => {
  it('creates an Updating HTTP origin under a generated name with its secret sealed at rest', async () => {
    const { client } = await member();
    const result = await add(
      client,
      httpOrigin({
        enableSignedUrl: true,
        signingSecret: 'abcdefghij0123456789',
        defaultCache: 3600,
        conversionParameters: [{ pattern: '/thumbs/', path: '/images/', parameter: 'w=100,h=100' }],
        overridableParameters: 'w, h',
        acl: { isAllowList: true, cidrs: ['10.0.0.0/8', ' 192.168.1.1 ', '', '2001:db8::/32'] },
      }),
    );
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    const origin = result.body.origin as OriginBody;
    expect(origin.name).toMatch(/^[a-z0-9]{12}\.img\.localhost$/);
    expect(origin.originName).toBe(origin.name);
    expect(origin.status).toBe(OriginStatus.updating);
    expect(origin.config.pathPrefix).toBe('assets');
    expect(origin.signingSecret).toBe('abcdefghij0123456789');
    expect(origin.conversionParameters[0]).toMatchObject({ pattern: 'thumbs/', path: 'images/' });
    expect(origin.acl).toEqual({ isAllowList: true, cidrs: ['10.0.0.0/8', '192.168.1.1', '2001:db8::/32'] });
    const row = await server.deps.db
      .selectFrom('origins')
      .select(['signing_secret_enc', 'overridable_parameters'])
      .where('id', '=', origin.originID)
      .executeTakeFirstOrThrow();
    expect(row.signing_secret_enc).not.toContain('abcdefghij');
    expect(server.deps.secrets.open(row.signing_secret_enc)).toBe('abcdefghij0123456789');
    expect(row.overridable_parameters).toBe('w,h');
  });

  it('names every invalid field with the spec message', async () => {
    const { client } = await member();
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [httpOrigin({}, { host: 'bad host!' }), 'origin.config.host', 'validation.host'],
      [httpOrigin({}, { host: '' }), 'origin.config.host', 'validation.required'],
      // Neither config shape matches: the contract's union names the config as a whole.
      [httpOrigin({}, { scheme: 'ftp' }), 'origin.config', 'validation.invalid'],
      [
        httpOrigin({}, { rewriteHost: 'a'.repeat(260) }),
        'origin.config.rewriteHost',
        'validation.maxLength|n=259',
      ],
      [httpOrigin({ defaultCache: -1 }), 'origin.defaultCache', 'validation.between|min=0&max=2147483647'],
      [
        httpOrigin({ defaultCache: 2147483648 }),
        'origin.defaultCache',
        'validation.between|min=0&max=2147483647',
      ],
      [httpOrigin({ defaultCache: 1.5 }), 'origin.defaultCache', 'validation.numeric'],
      [httpOrigin({ signingSecret: 'has space' }), 'origin.signingSecret', 'validation.printableAscii'],
      [httpOrigin({ enableSignedUrl: true }), 'origin.signingSecret', 'validation.required'],
      [
        httpOrigin({
          conversionParameters: [
            { pattern: 'a/', path: '', parameter: 'w=1' },
            { pattern: '/a/', path: '', parameter: 'w=2' },
          ],
        }),
        'origin.conversionParameters.1.pattern',
        'validation.duplicate',
      ],
      [
        httpOrigin({ conversionParameters: [{ pattern: 'a/', path: '', parameter: '  ' }] }),
        'origin.conversionParameters.0.parameter',
        'validation.required',
      ],
      [
        httpOrigin({ conversionParameters: [{ pattern: 'a/', path: '', parameter: 'w=abc' }] }),
        'origin.conversionParameters.0.parameter',
        'validation.invalid',
      ],
      [
        httpOrigin({ conversionParameters: [{ pattern: '', path: '', parameter: 'w=1' }] }),
        'origin.conversionParameters.0.pattern',
        'validation.required',
      ],
      [
        httpOrigin({ overridableParameters: 'w,nosuch' }),
        'origin.overridableParameters',
        'validation.invalid',
      ],
      [
        httpOrigin({ acl: { isAllowList: false, cidrs: ['10.0.0.1', '10.0.0.0/33'] } }),
        'origin.acl.cidrs.1',
        'validation.cidr',
      ],
      [
        httpOrigin({ acl: { isAllowList: false, cidrs: ['example.com'] } }),
        'origin.acl.cidrs.0',
        'validation.cidr',
      ],
      [httpOrigin({ kind: OriginKind.live }), 'origin.kind', 'validation.invalid'],
      [httpOrigin({ kind: 7 }), 'origin.kind', 'validation.invalid'],
      [
        { kind: OriginKind.s3, config: { bucket: 'b', endPoint: 'not a url' } },
        'origin.config.endPoint',
        'validation.invalid',
      ],
      [{ kind: OriginKind.http, config: { bucket: 'b' } }, 'origin.config.host', 'validation.required'],
    ];
    for (const [origin, field, message] of cases) {
      const result = await add(client, origin);
      expect(result.status, `${field} ${JSON.stringify(result.body)}`).toBe(400);
      expect(result.body.error).toBe('validation error');
      expect(result.body.invalids?.[field], `${field} ${JSON.stringify(result.body)}`).toContain(message);
    }
    const listed = await client.call('origin.list', {});
    expect(listed.body.origins).toEqual([]);
  });

  it('holds the plan origin limit, S3 and custom domains to the plan', async () => {
    const { client } = await member({ plan: 1 });
    expect(
      (await add(client, { kind: OriginKind.s3, config: { bucket: 'b' } })).body.invalids?.['origin.kind'],
    ).toEqual(['validation.invalid']);
    expect(
      (await add(client, httpOrigin({ originName: 'cdn.example.org' }))).body.invalids?.['origin.originName'],
    ).toEqual(['validation.invalid']);
    expect((await add(client, httpOrigin())).status).toBe(200);
    const second = await add(client, httpOrigin());
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('too many origin exists for this plan');
  });

  it('accepts a free custom domain on a plan that has them, once', async () => {
    const { client } = await member({ plan: 3 });
    const domain = `cdn-${Date.now()}.example.org`;
    const first = await add(client, httpOrigin({ originName: domain.toUpperCase() }));
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect((first.body.origin as OriginBody).originName).toBe(domain);
    const again = await add(client, httpOrigin({ originName: domain }));
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('domain already in use');
    expect(
      (await add(client, httpOrigin({ originName: 'x.img.localhost' }))).body.invalids?.['origin.originName'],
    ).toEqual(['validation.invalid']);
    expect(
      (await add(client, httpOrigin({ originName: 'bad_domain' }))).body.invalids?.['origin.originName'],
    ).toEqual(['validation.host']);
  });

  it('offers the LIVE kind to live organizations only', async () => {
    const { client } = await member({ isLive: true });
    // Live organizations reach no image operations at all (the contract's organizationKind).
    expect((await add(client, httpOrigin({ kind: OriginKind.live }))).status).toBe(404);
  });

  it('is refused to members without the origin permission', async () => {
    const { client } = await member({ permission: Permission.cache });
    const result = await add(client, httpOrigin());
    expect(result.status).toBe(404);
    expect(result.body.error).toBe('not enough permission');
  });
});

describe('origin.update and origin.delete', () => {
  it('keeps a stored S3 secret when none is sent and never sends it back', async () => {
    const { client } = await member();
    const created = await add(client, {
      kind: OriginKind.s3,
      config: {
        accessKeyID: 'AKID',
        secretAccessKey: 'SECRET',
        endPoint: 'http://127.0.0.1:9000',
        region: 'us-east-1',
        bucket: 'b',
        pathPrefix: '/p',
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const origin = created.body.origin as OriginBody;
    expect(origin.config.secretAccessKey).toBe('********');
    await server.deps.db
      .updateTable('origins')
      .set({ status: OriginStatus.applied })
      .where('id', '=', origin.originID)
      .execute();
    const updated = await client.call('origin.update', {
      origin: {
        originID: origin.originID,
        kind: OriginKind.s3,
        description: 'changed',
        config: { ...origin.config, secretAccessKey: '' },
      },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect((updated.body.origin as OriginBody).status).toBe(OriginStatus.updating);
    const row = await server.deps.db
      .selectFrom('origins')
      .selectAll()
      .where('id', '=', origin.originID)
      .executeTakeFirstOrThrow();
    expect(row.config_version).toBe(2);
    expect(server.deps.secrets.open(row.config.secretAccessKeyEnc as string)).toBe('SECRET');
    expect(row.name).toBe(origin.name);
  });

  it('keeps tenants apart', async () => {
    const owner = await member();
    const stranger = await member();
    const origin = (await add(owner.client, httpOrigin())).body.origin as OriginBody;
    const update = await stranger.client.call('origin.update', {
      origin: { ...httpOrigin(), originID: origin.originID },
    });
    expect(update.status).toBe(404);
    expect(update.body).toMatchObject({ error: 'origin not found', params: { id: origin.originID } });
    expect((await stranger.client.call('origin.delete', { originID: origin.originID })).status).toBe(404);
    expect((await stranger.client.call('origin.get', { originID: origin.originID })).status).toBe(404);
    expect((await stranger.client.call('origin.list', { organizationID: owner.organizationId })).status).toBe(
      404,
    );
    expect((await stranger.client.call('origin.list', {})).body.origins).toEqual([]);
    expect((await stranger.client.call('origin.list_minimum', {})).body.origins).toEqual([]);
    const minimum = await owner.client.call('origin.list_minimum', {});
    expect(minimum.body.origins).toEqual([
      {
        originID: origin.originID,
        name: origin.name,
        originName: origin.name,
        kind: 0,
        enableSignedUrl: false,
        deliveryUrl: `http://${origin.name}:${server.deps.config.EDGE_PORT}`,
      },
    ]);
    const usageOf = async () =>
      ((await owner.client.call('origin.list', {})).body.origins as Array<{ usage: unknown }>)[0]?.usage;
    expect(await usageOf()).toEqual({ requests: 0, outboundBytes: 0 });
    // This month's days count (UTC), the last day of last month does not.
    const now = new Date();
    const day = (month: number, date: number) =>
      new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + month, date)).toISOString().slice(0, 10);
    await server.deps.db
      .insertInto('usage_daily')
      .values(
        [
          [day(0, 1), 5, 5_000_000_000],
          [day(0, 2), 2, 10],
          [day(0, 0), 100, 100],
        ].map(([date, requests, bytes]) => ({
          origin_id: origin.originID,
          organization_id: owner.organizationId,
          day: date as string,
          requests: requests as number,
          outbound_bytes: bytes as number,
        })),
      )
      .execute();
    // Written as the edges write it, not through the console: the list kept in memory
    // (OriginLists) shows it within ORIGIN_LIST_MAX_AGE_MS.
    const counted = await until(
      'this month’s usage shows',
      async () => {
        const usage = await usageOf();
        return (usage as { requests: number }).requests === 0 ? undefined : usage;
      },
      ORIGIN_LIST_MAX_AGE_MS + 2_000,
    );
    expect(counted).toEqual({ requests: 7, outboundBytes: 5_000_000_010 });
    expect((await owner.client.call('origin.delete', { originID: origin.originID })).status).toBe(200);
    expect((await owner.client.call('origin.get', { originID: origin.originID })).status).toBe(404);
  });
});
