import { execFile } from 'node:child_process';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ALL_MEMBER_PERMISSIONS, OriginKind } from '@ukiyo/contract';
import type { Edge } from '@ukiyo/edge';
import { signUrl } from '@ukiyo/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTenant,
  createTestUser,
  getFromEdge,
  loggedIn,
  startImageServer,
  startTestEdge,
  testServer,
  type Client,
} from './harness.ts';

// The ukiyo CLI (packages/sdk), run as a child process as a user runs it, against a running
// console server and image edge: log in, create an origin from a file, fetch through the edge, purge.
const CLI = fileURLToPath(new URL('../../../packages/sdk/bin/ukiyo.mjs', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'ukiyo-cli-'));
const SECRET = 'cli-signing-secret';
let edge: Edge;
let imageServer: Server;
let baseUrl: string;
let owner: Client;

function ukiyo(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        env: { ...process.env, UKIYO_CONFIG: join(work, 'config.json'), LANG: 'en_US.UTF-8' },
        timeout: 30_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  const server = await testServer();
  imageServer = await startImageServer({ width: 640, height: 480 }, '#4682b4');
  edge = await startTestEdge(server);
  await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
  baseUrl = await server.withConfig({}, { cacheControl: edge });
  const tenant = await createTenant(server.deps);
  const user = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: ALL_MEMBER_PERMISSIONS,
  });
  owner = await loggedIn(baseUrl, user.email);
});

afterAll(async () => {
  await edge.close();
  await new Promise((resolve) => imageServer.close(resolve));
});

describe('the ukiyo CLI', () => {
  it('logs in, creates and updates an origin from files, and purges what the edge cached', async () => {
    const added = await owner.call('auth_token.add', { authToken: { description: 'cli', permission: null } });
    const login = await ukiyo('login', '--token', added.body.encodedToken as string, '--url', baseUrl);
    expect(login.code, login.stderr).toBe(0);
    expect(statSync(join(work, 'config.json')).mode & 0o777).toBe(0o600);

    const port = (imageServer.address() as AddressInfo).port;
    writeFileSync(
      join(work, 'origin.yaml'),
      [
        `kind: ${OriginKind.http}`,
        'description: from the CLI',
        'enableSignedUrl: true',
        `signingSecret: ${SECRET}`,
        'config:',
        '  scheme: http',
        `  host: "127.0.0.1:${port}"`,
        '  pathPrefix: ""',
        '  rewriteHost: ""',
      ].join('\n'),
    );
    const created = await ukiyo('origins', 'create', '-f', join(work, 'origin.yaml'));
    expect(created.code, created.stderr).toBe(0);
    const origin = JSON.parse(created.stdout) as { originID: number; name: string; description: string };
    expect(origin.description).toBe('from the CLI');

    await edge.refreshOrigins();
    const path = '/w=120/photos/cli.jpg';
    expect((await getFromEdge(edge, origin.name, path)).status).toBe(403);
    const fetched = await getFromEdge(edge, origin.name, signUrl(SECRET, path));
    expect(fetched.status).toBe(200);
    expect(fetched.headers['content-type']).toMatch(/^image\//);

    const purged = await ukiyo('purge', `http://${origin.name}${signUrl(SECRET, path)}`);
    expect(purged.code, purged.stderr).toBe(0);
    expect((JSON.parse(purged.stdout) as { urls: string[] }).urls.length).toBeGreaterThan(0);
    const lookup = await owner.call('cache.lookup', { originID: origin.originID, url: 'photos/cli.jpg' });
    expect(lookup.body).toEqual({ urls: [] });

    writeFileSync(
      join(work, 'origin.json'),
      JSON.stringify({
        kind: OriginKind.http,
        description: 'updated by the CLI',
        enableSignedUrl: true,
        signingSecret: SECRET,
        config: { scheme: 'http', host: `127.0.0.1:${port}`, pathPrefix: '', rewriteHost: '' },
      }),
    );
    const updated = await ukiyo(
      'origins',
      'update',
      String(origin.originID),
      '-f',
      join(work, 'origin.json'),
    );
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({
      originID: origin.originID,
      description: 'updated by the CLI',
    });

    const copied = await ukiyo('origins', 'copy', String(origin.originID));
    expect(copied.code, copied.stderr).toBe(0);
    const copy = JSON.parse(copied.stdout) as { originID: number; name: string; signingSecret: string };
    expect(copy).toMatchObject({ description: 'updated by the CLI', signingSecret: SECRET });
    expect(copy.name).not.toBe(origin.name);
    const rotated = await ukiyo('origins', 'rotate-secret', String(copy.originID));
    expect(rotated.code, rotated.stderr).toBe(0);
    expect((JSON.parse(rotated.stdout) as { signingSecret: string }).signingSecret).not.toBe(SECRET);

    const listed = await ukiyo('origins', 'list');
    expect((JSON.parse(listed.stdout) as { name: string }[]).map((o) => o.name)).toContain(origin.name);
    const usage = await ukiyo('usage');
    expect(usage.code, usage.stderr).toBe(0);
    expect(JSON.parse(usage.stdout)).toBeTypeOf('object');

    const missing = await ukiyo('origins', 'update', '999999999', '-f', join(work, 'origin.json'));
    expect(missing).toMatchObject({ code: 1, stderr: expect.stringContaining('404: ') });
    const invalid = await ukiyo('origins', 'create', '-f', join(work, 'missing.yaml'));
    expect(invalid).toMatchObject({ code: 1, stderr: expect.stringContaining('cannot read') });
  });
});
