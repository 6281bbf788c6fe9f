import { Validator } from '@seriousme/openapi-schema-validator';
import {
  ALL_MEMBER_PERMISSIONS,
  OriginKind,
  Permission,
  operations,
  type OperationName,
} from '@ukiyo/contract';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../src/http/api-v1.ts';
import { createTenant, createTestUser, loggedIn, testServer, unique, type Client } from './harness.ts';

// /api/openapi.json: a valid OpenAPI 3.1 document, and every /api/v1 call answers as it says.
interface Documented {
  parameters?: { name: string; in: string; required?: boolean }[];
  responses: Record<string, { content?: object }>;
  operationId: string;
}
type Document = { openapi: string; paths: Record<string, Record<string, Documented>> };

let baseUrl: string;
let document: Document;
let imageToken: string;
let liveToken: string;

async function issueToken(client: Client): Promise<string> {
  const added = await client.call('auth_token.add', {
    authToken: { description: 'openapi', permission: null },
  });
  return added.body.encodedToken as string;
}

async function ownerOf(isLive: boolean): Promise<Client> {
  const server = await testServer();
  const tenant = await createTenant(server.deps, { isLive });
  const user = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: ALL_MEMBER_PERMISSIONS,
  });
  return loggedIn(server.baseUrl, user.email);
}

beforeAll(async () => {
  baseUrl = (await testServer()).baseUrl;
  document = (await (await fetch(`${baseUrl}/api/openapi.json`)).json()) as Document;
  imageToken = await issueToken(await ownerOf(false));
  liveToken = await issueToken(await ownerOf(true));
});

describe('the OpenAPI document', () => {
  it('validates as OpenAPI 3.1', async () => {
    const result = await new Validator().validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
  });

  it('documents every /api/v1 route, the public cache calls and the live API', () => {
    const documented = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods)
        .filter((key) => key !== 'servers')
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    const routes = API_ROUTES.map((route) => `${route.method} /api/v1${route.path}`);
    expect(documented.filter((call) => call.includes('/api/v1/')).sort()).toEqual(routes.sort());
    expect(documented).toEqual(
      expect.arrayContaining([
        'POST /api/cache.lookup',
        'POST /api/cache.delete',
        'POST /api/token.info',
        'POST /',
      ]),
    );
  });

  it('walks every /api/v1 call: each answers a documented status with a body of the documented schema', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const call = async (
      method: string,
      url: string,
      token: string | undefined,
      body?: unknown,
      headers: Record<string, string> = {},
    ) => {
      const response = await fetch(url, {
        method,
        headers: {
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? (JSON.parse(text) as unknown) : undefined };
    };
    // The document is the schema registry: its `$ref`s (#/components/...) resolve in it.
    ajv.addSchema(document, 'https://ukiyo.test/openapi.json');
    const pointer = (...parts: string[]) =>
      parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
    const check = (
      label: string,
      [path, method, documented]: [string, string, Documented],
      answer: { status: number; body: unknown },
    ) => {
      const status = String(answer.status);
      const response = documented.responses[status];
      expect(response, `${label}: ${answer.status} ${JSON.stringify(answer.body)}`).toBeDefined();
      if (!response!.content) return expect(answer.body, label).toBeUndefined();
      const schema = `https://ukiyo.test/openapi.json#/${pointer('paths', path, method, 'responses', status, 'content', 'application/json', 'schema')}`;
      const valid = ajv.validate({ $ref: schema }, answer.body);
      expect(valid, `${label}: ${ajv.errorsText()} in ${JSON.stringify(answer.body).slice(0, 500)}`).toBe(
        true,
      );
    };

    const proxied = await (await testServer()).withConfig({ TRUST_PROXY: true });
    let addresses = 0;
    // Resources the calls act on, made through the API itself.
    const origin = await call('POST', `${baseUrl}/api/v1/origins`, imageToken, {
      kind: OriginKind.http,
      config: { scheme: 'http', host: '127.0.0.1:9', pathPrefix: '', rewriteHost: '' },
    });
    const madeToken = await call('POST', `${baseUrl}/api/v1/tokens`, imageToken, { description: 'walked' });
    const channel = await call('POST', `${baseUrl}/api/v1/channels`, liveToken, {
      hls: [{ video: { width: 640, height: 360 } }],
    });
    const member = `${unique('walked')}@example.com`;
    const values: Record<string, string | number> = {
      originID: (origin.body as { originID: number }).originID,
      authTokenID: (madeToken.body as { authToken: { authTokenID: number } }).authToken.authTokenID,
      channelID: (channel.body as { id: string }).id,
      emailAddress: member,
      from: '2026-01-01T00:00:00Z',
      to: '2026-02-01T00:00:00Z',
      url: '/photos/a.jpg',
    };
    const bodies: Partial<Record<OperationName, unknown>> = {
      'organization.update': { name: 'Walked', serviceDomain: '', description: '' },
      'origin.add': {
        kind: OriginKind.http,
        config: { scheme: 'http', host: '127.0.0.1:9', pathPrefix: '', rewriteHost: '' },
      },
      'origin.update': {
        kind: OriginKind.http,
        config: { scheme: 'http', host: '127.0.0.1:8', pathPrefix: '', rewriteHost: '' },
      },
      'origin.check': { path: '' },
      'origin.upload_tls_certificate': { certificate: 'not a certificate', privateKey: 'not a key' },
      'cache.delete': { originID: values.originID, url: values.url },
      'cache.purge_prefix': { originID: values.originID, pathPrefix: '/' },
      'user.add': {
        user: { emailAddress: member, fullName: 'Walked', permission: Permission.origin },
        password: 'member-password-1',
      },
      'user.update': { emailAddress: member, fullName: 'Walked again', permission: Permission.cache },
      'user.set_enabled': { enabled: false },
      'auth_token.add': { description: 'walked too', permission: Permission.origin },
      'channel.add': { hls: [{ video: { width: 640, height: 360 } }] },
    };
    // Calls that cannot succeed here, and the documented refusal they get instead.
    const refusals: Partial<Record<OperationName, number>> = {
      'origin.upload_tls_certificate': 400,
      'cache.lookup': 503,
      'cache.delete': 503,
      'cache.purge_prefix': 503,
    };

    const calls = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/api/v1/'))
      .flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, documented]) => ({ path, method, documented })),
      )
      // Deletions last: the other calls use what they delete.
      .sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
    // Invite before changing the invited member.
    calls.sort(
      (a, b) =>
        Number(b.documented.operationId === 'user.add') - Number(a.documented.operationId === 'user.add'),
    );
    for (const { path, method, documented } of calls) {
      const name = documented.operationId as OperationName;
      const label = `${method.toUpperCase()} ${path}`;
      const query = (documented.parameters ?? [])
        .filter((parameter) => parameter.in === 'query' && values[parameter.name] !== undefined)
        .map((parameter) => `${parameter.name}=${encodeURIComponent(values[parameter.name]!)}`);
      const filled = path.replace(/\{(\w+)\}/g, (_, param: string) => encodeURIComponent(values[param]!));
      const url = `${baseUrl}${filled}${query.length ? `?${query.join('&')}` : ''}`;
      const token = operations[name].organizationKind === 'live' ? liveToken : imageToken;
      const sent = (documented as { requestBody?: unknown }).requestBody ? (bodies[name] ?? {}) : undefined;

      const answer = await call(method.toUpperCase(), url, token, sent);
      check(label, [path, method, documented], answer);
      const expected = refusals[name];
      if (expected === undefined)
        expect(answer.status, `${label}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
      else expect(answer.status, `${label}: ${JSON.stringify(answer.body)}`).toBe(expected);
      // Each from an address of its own: missing tokens count against their address, and the
      // suites' other files share this server's 127.0.0.1.
      const tokenless = await call(method.toUpperCase(), url.replace(baseUrl, proxied), undefined, sent, {
        'X-Forwarded-For': `198.51.100.${++addresses}`,
      });
      check(`${label} without a token`, [path, method, documented], tokenless);
    }
  });
});
