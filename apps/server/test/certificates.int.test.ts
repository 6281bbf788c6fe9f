import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { get as httpGet, type Server } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALL_MEMBER_PERMISSIONS, OriginKind, OriginStatus } from '@ukiyo/contract';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Edge } from '@ukiyo/edge';
import {
  createTenant,
  createTestUser,
  loggedIn,
  testServer,
  unique,
  type Client,
  type TestServer,
  startImageServer,
  startTestEdge,
} from './harness.ts';

// Certificates are made here with the openssl command (a root, intermediates and leaves signed
// by `openssl ca`, which alone sets arbitrary validity dates), then uploaded through the ui-api
// and served by a real edge over HTTPS.
let server: TestServer;
let edge: Edge;
let imageServer: Server;
let owner: Client;
let stranger: Client;
let domain: string;
let customOriginID: number;
let plainOriginID: number;
let plainOriginName: string;
let strangerOriginID: number;
let pki: ReturnType<typeof makePki>;

function makePki(host: string) {
  const dir = mkdtempSync(join(tmpdir(), 'ukiyo-pki-'));
  const path = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const read = (name: string) => readFileSync(path(name), 'utf8');
  writeFileSync(path('index.txt'), '');
  writeFileSync(path('serial'), '1000\n');
  writeFileSync(
    path('ca.cnf'),
    [
      '[ca]',
      'default_ca = d',
      '[d]',
      'database = index.txt',
      'new_certs_dir = .',
      'serial = serial',
      'default_md = sha256',
      'policy = p',
      'unique_subject = no',
      '[p]',
      'commonName = supplied',
      '',
    ].join('\n'),
  );
  writeFileSync(
    path('ca.ext'),
    'basicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\n',
  );
  const key = (name: string) =>
    openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`);
  const csr = (name: string) =>
    openssl('req', '-new', '-key', `${name}.key`, '-subj', `/CN=${name}`, '-out', `${name}.csr`);
  const sign = (
    name: string,
    issuer: string,
    ext: string,
    dates: { start: string; end: string } = { start: '20200101000000Z', end: '20991231000000Z' },
  ) => {
    openssl(
      'ca',
      '-batch',
      '-notext',
      '-config',
      'ca.cnf',
      '-cert',
      `${issuer}.pem`,
      '-keyfile',
      `${issuer}.key`,
      '-in',
      `${name}.csr`,
      '-out',
      `${name}.pem`,
      '-extfile',
      ext,
      '-startdate',
      dates.start,
      '-enddate',
      dates.end,
    );
    return read(`${name}.pem`);
  };
  const leafExt = (name: string, hosts: string[]) => {
    writeFileSync(
      path(`${name}.ext`),
      `basicConstraints = CA:FALSE\nsubjectAltName = ${hosts.map((h) => `DNS:${h}`).join(',')}\n`,
    );
    return `${name}.ext`;
  };

  key('root');
  openssl(
    'req',
    '-x509',
    '-new',
    '-key',
    'root.key',
    '-subj',
    '/CN=Ukiyo Test Root',
    '-days',
    '30',
    '-out',
    'root.pem',
  );
  for (const name of ['intermediate', 'stranger-intermediate']) {
    key(name);
    csr(name);
    sign(name, 'root', 'ca.ext');
  }
  const leaf = (
    name: string,
    hosts: string[],
    dates?: { start: string; end: string },
    issuer = 'intermediate',
  ) => {
    key(name);
    csr(name);
    return sign(name, issuer, leafExt(name, hosts), dates);
  };
  const result = {
    root: read('root.pem'),
    intermediate: read('intermediate.pem'),
    strangerIntermediate: read('stranger-intermediate.pem'),
    valid: leaf('valid', [host]),
    wildcard: leaf('wildcard', [`*.${host.split('.').slice(1).join('.')}`]),
    wrongHost: leaf('wrong-host', ['somebody-else.example.org']),
    expired: leaf('expired', [host], { start: '20200101000000Z', end: '20200201000000Z' }),
    validKey: '',
    wildcardKey: '',
    expiredKey: '',
    wrongHostKey: '',
    otherKey: '',
    encryptedPkcs8: '',
    encryptedTraditional: '',
  };
  key('other');
  openssl('pkey', '-in', 'valid.key', '-aes256', '-passout', 'pass:secret', '-out', 'enc8.key');
  openssl('ec', '-in', 'valid.key', '-aes256', '-passout', 'pass:secret', '-out', 'enctrad.key');
  Object.assign(result, {
    validKey: read('valid.key'),
    wildcardKey: read('wildcard.key'),
    expiredKey: read('expired.key'),
    wrongHostKey: read('wrong-host.key'),
    otherKey: read('other.key'),
    encryptedPkcs8: read('enc8.key'),
    encryptedTraditional: read('enctrad.key'),
  });
  return result;
}

async function member(): Promise<Client> {
  const tenant = await createTenant(server.deps);
  const { email } = await createTestUser(server.deps, {
    accountId: tenant.accountId,
    permission: ALL_MEMBER_PERMISSIONS,
  });
  return loggedIn(server.baseUrl, email);
}

async function addOrigin(client: Client, originName = ''): Promise<{ originID: number; name: string }> {
  const port = (imageServer.address() as AddressInfo).port;
  const added = await client.call('origin.add', {
    origin: {
      kind: OriginKind.http,
      originName,
      // The test image server sends no cache headers: an hour, so that hits are hits.
      defaultCache: 3600,
      config: { scheme: 'http', host: `127.0.0.1:${port}`, pathPrefix: '', rewriteHost: '' },
    },
  });
  expect(added.status, JSON.stringify(added.body)).toBe(200);
  return added.body.origin as { originID: number; name: string };
}

function upload(
  client: Client,
  originID: number,
  certificate: string,
  privateKey: string,
  intermediateCertificate = pki.intermediate,
) {
  return client.call('origin.upload_tls_certificate', {
    originID,
    certificate,
    intermediateCertificate,
    privateKey,
  });
}

beforeAll(async () => {
  server = await testServer();
  imageServer = await startImageServer({ width: 320, height: 240 }, '#4169e1');
  edge = await startTestEdge(server);
  await new Promise<void>((resolve) => edge.tlsServer.listen(0, '127.0.0.1', resolve));

  domain = `${unique('cdn')}.example.org`;
  pki = makePki(domain);
  owner = await member();
  stranger = await member();
  customOriginID = (await addOrigin(owner, domain)).originID;
  ({ originID: plainOriginID, name: plainOriginName } = await addOrigin(owner));
  strangerOriginID = (await addOrigin(stranger, `${unique('cdn')}.example.org`)).originID;
}, 60_000);

afterAll(async () => {
  await edge.close();
  await new Promise((resolve) => imageServer.close(resolve));
});

describe('origin.upload_tls_certificate refusals', () => {
  it('takes only a custom domain of the caller’s organization', async () => {
    for (const originID of [plainOriginID, strangerOriginID, 999_999_999]) {
      const result = await upload(owner, originID, pki.valid, pki.validKey);
      expect(result.status).toBe(400);
      expect(result.body.error).toBe('invalid origin for certificate');
    }
    // The stranger cannot put a certificate on the owner's domain either.
    const foreign = await upload(stranger, customOriginID, pki.valid, pki.validKey);
    expect(foreign.body.error).toBe('invalid origin for certificate');
  });

  it('answers each certificate problem with its own error', async () => {
    const cases: Array<[string, Parameters<typeof upload>]> = [
      ['certificate key encrypted', [owner, customOriginID, pki.valid, pki.encryptedPkcs8]],
      ['certificate key encrypted', [owner, customOriginID, pki.valid, pki.encryptedTraditional]],
      ['certificate unreadable', [owner, customOriginID, 'not a certificate', pki.validKey]],
      [
        'certificate unreadable',
        [owner, customOriginID, pki.valid.replace(/[A-Za-z]{30}/, 'x'.repeat(30)), pki.validKey],
      ],
      ['certificate unreadable', [owner, customOriginID, pki.valid, 'not a key']],
      ['certificate unreadable', [owner, customOriginID, pki.valid, pki.validKey, 'garbage intermediate']],
      ['certificate host mismatch', [owner, customOriginID, pki.wrongHost, pki.wrongHostKey]],
      ['certificate expired', [owner, customOriginID, pki.expired, pki.expiredKey]],
      [
        'certificate chain invalid',
        [owner, customOriginID, pki.valid, pki.validKey, pki.strangerIntermediate],
      ],
      // The root did not issue the leaf directly either.
      ['certificate chain invalid', [owner, customOriginID, pki.valid, pki.validKey, pki.root]],
      ['certificate key mismatch', [owner, customOriginID, pki.valid, pki.otherKey]],
      ['certificate key mismatch', [owner, customOriginID, pki.valid, pki.wrongHostKey]],
    ];
    for (const [error, args] of cases) {
      const result = await upload(...args);
      expect(result.status, error).toBe(400);
      expect(result.body.error, JSON.stringify(args.slice(2))).toBe(error);
    }
    const mismatch = await upload(owner, customOriginID, pki.wrongHost, pki.wrongHostKey);
    expect(mismatch.body.params).toEqual({ host: domain });
    const origin = await owner.call('origin.get', { originID: customOriginID });
    expect((origin.body.origin as { tlsCertificate: unknown }).tlsCertificate).toBeNull();
  });
});

describe('origin.upload_tls_certificate success', () => {
  it('stores the certificate with its fingerprint and expiry, the key sealed, and shows it', async () => {
    const before = await server.deps.db
      .selectFrom('origins')
      .select('config_version')
      .where('id', '=', customOriginID)
      .executeTakeFirstOrThrow();
    const result = await upload(owner, customOriginID, pki.valid, pki.validKey);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    const leaf = new X509Certificate(pki.valid);
    const expected = {
      tlsCertificateId: expect.any(Number),
      fingerprint: leaf.fingerprint256,
      expiresAt: '2099-12-31T00:00:00.000Z',
    };
    expect(result.body.tlsCertificate).toEqual(expected);

    const got = await owner.call('origin.get', { originID: customOriginID });
    expect(got.body.origin).toMatchObject({ tlsCertificate: expected, status: OriginStatus.updating });
    const listed = await owner.call('origin.list', {});
    const origins = listed.body.origins as Array<{ originID: number; tlsCertificate: unknown }>;
    expect(origins.find((origin) => origin.originID === customOriginID)?.tlsCertificate).toEqual(expected);
    expect(origins.find((origin) => origin.originID === plainOriginID)?.tlsCertificate).toBeNull();

    const row = await server.deps.db
      .selectFrom('tls_certificates')
      .selectAll()
      .where('origin_id', '=', customOriginID)
      .executeTakeFirstOrThrow();
    expect(row.private_key_enc).not.toContain('PRIVATE KEY');
    expect(server.deps.secrets.open(row.private_key_enc)).toContain('BEGIN PRIVATE KEY');
    expect(new X509Certificate(row.intermediate_certificate).subject).toBe('CN=intermediate');
    const after = await server.deps.db
      .selectFrom('origins')
      .select('config_version')
      .where('id', '=', customOriginID)
      .executeTakeFirstOrThrow();
    expect(after.config_version).toBe(before.config_version + 1);
  });

  it('replaces the certificate; a wildcard and a full-chain file are accepted', async () => {
    const result = await upload(owner, customOriginID, pki.wildcard + pki.intermediate, pki.wildcardKey, '');
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect((result.body.tlsCertificate as { fingerprint: string }).fingerprint).toBe(
      new X509Certificate(pki.wildcard).fingerprint256,
    );
    const rows = await server.deps.db
      .selectFrom('tls_certificates')
      .select('fingerprint')
      .where('origin_id', '=', customOriginID)
      .execute();
    expect(rows).toHaveLength(1);
    // Back to the exact-name certificate for the edge test.
    expect((await upload(owner, customOriginID, pki.valid, pki.validKey)).status).toBe(200);
  });
});

describe('edge HTTPS', () => {
  function get(
    servername: string,
    host: string,
    path = '/w=100/photo.jpg',
    agent: HttpsAgent | false = false,
  ) {
    const { port } = edge.tlsServer.address() as AddressInfo;
    return new Promise<{ status: number; type: string; body: Buffer }>((resolve, reject) => {
      const req = httpsRequest(
        { host: '127.0.0.1', port, path, servername, headers: { host }, ca: pki.root, agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              type: String(res.headers['content-type']),
              body: Buffer.concat(chunks),
            }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  it('answers the custom domain with its certificate, chosen by SNI', async () => {
    await edge.refreshOrigins();
    const answer = await get(domain, domain);
    expect(answer.status, answer.body.toString()).toBe(200);
    expect(answer.type).toMatch(/^image\//);
    expect((await sharp(answer.body).metadata()).width).toBe(100);
    // The Host must be the name of the handshake.
    expect((await get(domain, plainOriginName)).status).toBe(421);
  });

  it('answers repeated hits on one TLS connection from the hot path, for its own name only', async () => {
    await edge.refreshOrigins();
    const hotAnswers = async () =>
      (await edge.metrics.getSingleMetric('ukiyo_edge_hot_path_answers_total')?.get())?.values[0]?.value ?? 0;
    /** Asks until the hot path answers (the variant reaches memory once its disk write is done). */
    const untilHot = async (ask: () => Promise<number>) => {
      const before = await hotAnswers();
      for (let tries = 0; tries < 20 && (await hotAnswers()) === before; tries++) {
        expect(await ask()).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await hotAnswers()).toBeGreaterThan(before);
    };
    const path = '/w=120/photo.jpg';
    // The plain origin's variant, remembered and in memory, asked for on the plain port.
    await new Promise<void>((resolve) => edge.server.listen(0, '127.0.0.1', resolve));
    const { port } = edge.server.address() as AddressInfo;
    await untilHot(
      () =>
        new Promise<number>((resolve, reject) =>
          httpGet({ host: '127.0.0.1', port, path, headers: { host: plainOriginName } }, (res) => {
            res.resume().on('end', () => resolve(res.statusCode ?? 0));
          }).on('error', reject),
        ),
    );
    const agent = new HttpsAgent({ keepAlive: true, maxSockets: 1 });
    try {
      await untilHot(async () => (await get(domain, domain, path, agent)).status);
      const again = await get(domain, domain, path, agent);
      expect((await sharp(again.body).metadata()).width).toBe(120);
      // Over the same connection (the custom domain's handshake) the plain origin's remembered
      // hit is misdirected, on the hot path as on node:http's.
      const before = await hotAnswers();
      expect((await get(domain, plainOriginName, path, agent)).status).toBe(421);
      expect(await hotAnswers()).toBe(before);
    } finally {
      agent.destroy();
    }
  });

  it('has no certificate for any other name', async () => {
    await edge.refreshOrigins();
    for (const servername of [plainOriginName, 'unknown.example.org', `x.${domain}`])
      // The edge aborts the handshake: no certificate (least of all another tenant's) is sent.
      await expect(get(servername, servername)).rejects.toThrow(/before secure TLS connection/);
  });

  it('stops serving the certificate when the custom domain changes', async () => {
    const port = (imageServer.address() as AddressInfo).port;
    const renamed = `${unique('cdn')}.example.org`;
    const updated = await owner.call('origin.update', {
      origin: {
        originID: customOriginID,
        kind: OriginKind.http,
        originName: renamed,
        config: { scheme: 'http', host: `127.0.0.1:${port}`, pathPrefix: '', rewriteHost: '' },
      },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    await edge.refreshOrigins();
    for (const servername of [renamed, domain])
      await expect(get(servername, servername)).rejects.toThrow(/before secure TLS connection/);
  });
});
