// A tenant editing origins as fast as the ui-api answers: what hurts the other tenants most.
// tenant-isolation.int.test.ts and bench/tenant-isolation.ts run it (`churnElsewhere`) as a
// process of its own, a client elsewhere as a real tenant would be, so its requests cost
// neither the server's thread nor the one timing the other tenant's requests.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { API_VERSION, OriginKind } from '@ukiyo/contract';

export interface Churn {
  /** The console's base URL. */
  url: string;
  /** A session of the tenant, in the organization it edits. */
  cookie: string;
  /** Where the origins point (host:port). */
  host: string;
  seconds: number;
}

/** The top plan's origin limit: the tenant keeps its table as large as it may be. */
const ORIGIN_LIMIT = 1000;

async function call(churn: Churn, operation: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${churn.url}/.ui-api/${operation}?api-version=${API_VERSION}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Requested-With': 'XMLHttpRequest',
      Cookie: churn.cookie,
    },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${operation}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

/**
 * Adds origins carrying everything an edge has to open and compile (a sealed signing secret,
 * an ACL, a rule) for `seconds`, deleting the oldest at the plan's limit; returns the edits.
 */
async function churnOrigins(churn: Churn): Promise<number> {
  const deadline = Date.now() + churn.seconds * 1000;
  const owned: number[] = [];
  let edits = 0;
  while (Date.now() < deadline) {
    if (owned.length >= ORIGIN_LIMIT) await call(churn, 'origin.delete', { originID: owned.shift() });
    const added = await call(churn, 'origin.add', {
      origin: {
        kind: OriginKind.http,
        enableSignedUrl: true,
        signingSecret: 'abcdefghij0123456789',
        acl: { isAllowList: false, cidrs: ['192.0.2.0/24'] },
        conversionParameters: [{ pattern: '/thumbs/', path: '/images/', parameter: 'w=100' }],
        config: { scheme: 'http', host: churn.host, pathPrefix: '', rewriteHost: '' },
      },
    });
    owned.push((added.origin as { originID: number }).originID);
    edits++;
  }
  return edits;
}

/** Runs the churn in a process of its own until its time is up; resolves to its count of edits. */
export function churnElsewhere(churn: Churn): Promise<number> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), JSON.stringify(churn)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) =>
      code === 0
        ? resolve((JSON.parse(output) as { edits: number }).edits)
        : reject(new Error(`origin-churn.ts exited with ${code}`)),
    ),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const edits = await churnOrigins(JSON.parse(process.argv[2]!) as Churn);
  process.stdout.write(`${JSON.stringify({ edits })}\n`);
}
