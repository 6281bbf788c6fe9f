import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { serve } from '@hono/node-server';
import { ALL_MEMBER_PERMISSIONS, ALL_PERMISSIONS, API_VERSION, OriginKind } from '@ukiyo/contract';
import pino from 'pino';
import sharp from 'sharp';
import { SMTPServer } from 'smtp-server';
import { inject } from 'vitest';
import { createEdge, type Edge, type EdgeOptions } from '@ukiyo/edge';
import { hashPassword } from '../src/auth/passwords.ts';
import { createOrganization, createSakuraAccount } from '../src/db/repositories/organizations.ts';
import { insertOrigin } from '../src/db/repositories/origins.ts';
import type { JobQueue } from '../src/jobs/queue.ts';
import { Mailer } from '../src/mail/mailer.ts';
import { createUser, setUserRestrictions } from '../src/db/repositories/users.ts';
import { createServerApp, createServerDeps, loadConfig, type Config, type ServerDeps } from '../src/index.ts';

/**
 * This worker's PostgreSQL database for the run (global-setup.ts), or '' on embedded PGlite. The
 * pool numbers its workers from 1.
 */
export function testDatabaseUrl(): string {
  const urls = inject('testDatabaseUrls');
  if (urls.length === 0) return '';
  const url = urls[Number(process.env.VITEST_POOL_ID) - 1];
  if (!url) throw new Error(`no test database for pool ${process.env.VITEST_POOL_ID} of ${urls.length}`);
  return url;
}

export interface TestServer {
  deps: ServerDeps;
  baseUrl: string;
  /** Another listener over the same database with some configuration or parts changed. */
  withConfig(overrides: Partial<Config>, parts?: Partial<ServerDeps>): Promise<string>;
}

let shared: Promise<TestServer> | undefined;

function listen(deps: ServerDeps): Promise<string> {
  return new Promise((resolve) => {
    const app = createServerApp(deps, { consoleDist: join(tmpdir(), 'ukiyo-no-console') });
    serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve(`http://127.0.0.1:${info.port}`),
    );
  });
}

/**
 * One server per test worker, on a real listening socket over the real database (PGlite in a
 * temporary DATA_DIR, or the run's PostgreSQL database). Test files share it, so each test
 * creates its own organizations and users with unique names. It allows origins on private
 * addresses, as the suites' local origins need.
 */
export function testServer(): Promise<TestServer> {
  shared ??= (async () => {
    const databaseUrl = testDatabaseUrl() || undefined;
    const config = loadConfig({
      DATA_DIR: mkdtempSync(join(tmpdir(), 'ukiyo-it-')),
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      LOG_LEVEL: 'silent',
      // The suites' origins, webhooks and S3 stand-ins listen on loopback; the refusal itself
      // is tested on a listener with it unset (origin-addresses.int.test.ts).
      ALLOW_PRIVATE_ORIGINS: '1',
    });
    const { deps } = await createServerDeps(config);
    const baseUrl = await listen(deps);
    return {
      deps,
      baseUrl,
      withConfig: (overrides, parts = {}) =>
        listen({ ...deps, ...parts, config: { ...deps.config, ...overrides } }),
    };
  })();
  return shared;
}

export interface CallResult {
  status: number;
  body: Record<string, unknown> & { error?: string; invalids?: Record<string, string[]> };
  headers: Headers;
}

/** A browser-like caller of the ui-api with its own cookie jar. */
export class Client {
  cookie = '';

  constructor(readonly baseUrl: string) {}

  async call(
    operation: string,
    body: unknown = {},
    init: { headers?: Record<string, string> } = {},
  ): Promise<CallResult> {
    const response = await fetch(`${this.baseUrl}/.ui-api/${operation}?api-version=${API_VERSION}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Requested-With': 'XMLHttpRequest',
        ...(this.cookie ? { Cookie: this.cookie } : {}),
        ...init.headers,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    // As a browser does: the last Set-Cookie for the session cookie wins; an empty value clears it.
    const latest = response.headers.getSetCookie().at(-1)?.split(';')[0];
    if (latest !== undefined) this.cookie = latest.endsWith('=') ? '' : latest;
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers };
  }

  async login(emailAddress: string, password: string): Promise<CallResult> {
    return this.call('auth.login', { emailAddress, password });
  }
}

export const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

export const PASSWORD = 'correct-horse-battery';
let passwordHash: Promise<string> | undefined;

/** An account with organizations and users in it, written straight through the repositories. */
export async function createTenant(
  deps: ServerDeps,
  options: { organizations?: number; isLive?: boolean } = {},
): Promise<{ accountId: number; organizationIds: number[]; memberCode: string }> {
  const memberCode = unique('M').toUpperCase();
  const accountId = await createSakuraAccount(deps.db, { memberCode, name: `Account ${memberCode}` });
  const organizationIds: number[] = [];
  for (let i = 0; i < (options.organizations ?? 1); i++) {
    organizationIds.push(
      await createOrganization(deps.db, {
        accountId,
        name: `Org ${i} of ${memberCode}`,
        serviceCode: unique('svc'),
        isLive: options.isLive ?? false,
      }),
    );
  }
  return { accountId, organizationIds, memberCode };
}

export async function createTestUser(
  deps: ServerDeps,
  options: {
    accountId: number | null;
    permission: number;
    activated?: boolean;
    restrictedTo?: number[];
    enabled?: boolean;
  },
): Promise<{ userId: number; email: string }> {
  passwordHash ??= hashPassword(PASSWORD);
  const email = `${unique('user')}@example.com`;
  const userId = await createUser(deps.db, {
    email,
    full_name: 'Test User',
    password_hash: await passwordHash,
    permission: options.permission,
    enabled: options.enabled ?? true,
    activated_at: options.activated === false ? null : new Date(),
    sakura_account_id: options.accountId,
  });
  if (options.restrictedTo) await setUserRestrictions(deps.db, userId, options.restrictedTo);
  return { userId, email };
}

/** The newest mail to an address from the outbox, and the first link in it. */
export async function lastMail(
  deps: ServerDeps,
  to: string,
): Promise<{ subject: string; body: string; link: string }> {
  const mail = await deps.db
    .selectFrom('mail_outbox')
    .selectAll()
    .where('recipient', '=', to)
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  return { subject: mail.subject, body: mail.body, link: /https?:\/\/\S+/.exec(mail.body)?.[0] ?? '' };
}

/** A new organization with two members holding every member bit: one to act, one to manage them. */
export async function memberAndManager(deps: ServerDeps) {
  const tenant = await createTenant(deps);
  const options = { accountId: tenant.accountId, permission: ALL_MEMBER_PERMISSIONS };
  const member = await createTestUser(deps, options);
  const manager = await createTestUser(deps, options);
  return { organizationId: tenant.organizationIds[0]!, member, manager };
}

export interface ApiReply {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked field by field
  body: any;
}

/** One /api/v1 call to `baseUrl` with an API token; its JSON answer parsed. */
export async function apiV1(
  baseUrl: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiReply> {
  const response = await fetch(`${baseUrl}/api/v1${path}`, {
    method,
    headers: {
      ...headers,
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** A new administrator (every permission, no account), logged in. */
export async function loggedInAdministrator(server: TestServer): Promise<Client> {
  const { email } = await createTestUser(server.deps, { accountId: null, permission: ALL_PERMISSIONS });
  return loggedIn(server.baseUrl, email);
}

/** Logs a fresh client in, for the common case. */
export async function loggedIn(baseUrl: string, email: string, password = PASSWORD): Promise<Client> {
  const client = new Client(baseUrl);
  const result = await client.login(email, password);
  if (result.status !== 200) throw new Error(`login failed: ${JSON.stringify(result.body)}`);
  return client;
}

/** A local HTTP origin answering every path with one generated JPEG. */
export async function startImageServer(
  size: { width: number; height: number },
  background: string,
): Promise<Server> {
  const photo = await sharp({ create: { ...size, channels: 3, background } })
    .jpeg()
    .toBuffer();
  const imageServer = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'image/jpeg' }).end(photo),
  );
  await new Promise<void>((resolve) => imageServer.listen(0, '127.0.0.1', resolve));
  return imageServer;
}

/**
 * An image edge over the test server's database, allowed to reach loopback origins, with a
 * cache of its own; polling and metering are left to the test (refreshOrigins, flushUsage).
 */
export function startTestEdge(server: TestServer, options: Partial<EdgeOptions> = {}): Promise<Edge> {
  return createEdge(
    { ...server.deps, config: { ...server.deps.config, ALLOW_PRIVATE_ORIGINS: true } },
    {
      cacheDir: mkdtempSync(join(tmpdir(), 'ukiyo-edge-')),
      originPollMs: 60_000,
      meteringFlushMs: 60_000,
      ...options,
    },
  );
}

/** An HTTP origin of the organization over `host` (a loopback server), written straight to the database; returns its name. */
export async function insertHttpOrigin(
  deps: ServerDeps,
  organizationId: number,
  host: string,
): Promise<string> {
  const name = `${unique('o')}.${deps.config.EDGE_DOMAIN}`;
  await insertOrigin(
    deps.db,
    organizationId,
    name,
    {
      kind: OriginKind.http,
      originName: name,
      enableSignedUrl: false,
      signingSecretEnc: '',
      defaultCache: 3600,
      enableClientHints: false,
      allowSvg: false,
      description: '',
      config: { scheme: 'http', host, pathPrefix: '', rewriteHost: '' },
      acl: { isAllowList: false, cidrs: [] },
      overridableParameters: '',
    },
    [],
  );
  return name;
}

export interface EdgeAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  ms: number;
}

/** A GET to a listening edge for `host` (the origin's name), timed. */
export function getFromEdge(edge: Edge, host: string, path: string): Promise<EdgeAnswer> {
  const { port } = edge.server.address() as AddressInfo;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          ms: performance.now() - started,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * A local SMTP server collecting what it receives, and a Mailer queueing to it with its worker
 * running in this process (`options.refuse`: the server refuses every mail while it returns true;
 * `options.jobs`: a queue of other retry policies over the same database).
 */
export async function startSmtpSink(
  deps: ServerDeps,
  options: { refuse?: () => boolean; jobs?: JobQueue } = {},
): Promise<{ received: string[]; mailer: Mailer; close(): Promise<void> }> {
  const received: string[] = [];
  const sink = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, _session, callback) {
      let data = '';
      stream.on('data', (chunk: Buffer) => (data += chunk.toString()));
      stream.on('end', () => {
        if (options.refuse?.()) return callback(new Error('mailbox unavailable, try later'));
        received.push(data);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const port = (sink.server.address() as AddressInfo).port;
  const mailer = new Mailer(
    deps.db,
    options.jobs ?? deps.jobs,
    { smtpUrl: `smtp://127.0.0.1:${port}`, from: 'Ukiyo <no-reply@example.com>' },
    pino({ level: 'silent' }),
  );
  const stopWorking = await mailer.work();
  return {
    received,
    mailer,
    close: async () => {
      await stopWorking();
      await new Promise<void>((resolve) => sink.close(() => resolve()));
    },
  };
}
