import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { errorMessageKey, isErrorCode, MESSAGES, parseMessageRef } from '@ukiyo/contract';
import { parse as parseYaml } from 'yaml';
import { createUkiyoClient } from './index.ts';

/** What `ukiyo login` keeps: where the console is and the encoded token. */
interface Saved {
  url: string;
  token: string;
}

/** A failure the CLI reports as one line and exit status 1. */
class CliError extends Error {}

/** Japanese unless the locale says English, as the console. */
const LANGUAGE = /^en/i.test(process.env.LC_ALL || process.env.LC_MESSAGES || process.env.LANG || '')
  ? 'en'
  : 'ja';

function text(key: string, params: Record<string, string> = {}): string {
  const message = (MESSAGES as Record<string, { ja: string; en: string }>)[key]?.[LANGUAGE] ?? key;
  return message.replace(/\{\{(\w+)\}\}/g, (_, name: string) => params[name] ?? '');
}

/** `$UKIYO_CONFIG`, else `ukiyo/config.json` in the XDG config directory. */
function configFile(): string {
  if (process.env.UKIYO_CONFIG) return process.env.UKIYO_CONFIG;
  return join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'ukiyo', 'config.json');
}

async function saved(): Promise<Saved> {
  try {
    return JSON.parse(await readFile(configFile(), 'utf8')) as Saved;
  } catch {
    throw new CliError(text('cli.notLoggedIn'));
  }
}

/** A JSON or YAML file (YAML is a superset of JSON: one parser reads both). */
async function readDocument(file: string): Promise<unknown> {
  try {
    return parseYaml(await readFile(file, 'utf8')) as unknown;
  } catch {
    throw new CliError(text('cli.fileUnreadable', { file }));
  }
}

/** An error body as the console words it, with each invalid field on a line. */
function describeFailure(body: unknown, status: number): string {
  const { error, invalids } = (body ?? {}) as { error?: string; invalids?: Record<string, string[]> };
  // The public cache calls answer sentences of their own rather than catalogue codes.
  const message = isErrorCode(error) ? text(errorMessageKey(error)) : (error ?? text('error.internal'));
  const lines = [`${status}: ${message}`];
  for (const [field, refs] of Object.entries(invalids ?? {})) {
    lines.push(
      `  ${field}: ${refs.map((ref) => text(parseMessageRef(ref).key, parseMessageRef(ref).params)).join(', ')}`,
    );
  }
  return lines.join('\n');
}

/** The answer's data, or a CliError worded from its error body. */
async function answered<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new CliError(describeFailure(error, response.status));
  return data as T;
}

/** The usage, one command a line. */
const usage = () => new CliError(text('cli.usage').split(' | ').join('\n  '));

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

async function client() {
  const { url, token } = await saved();
  return createUkiyoClient({ baseUrl: url, token });
}

async function login(token: string | undefined, url: string) {
  if (!token) throw usage();
  const api = createUkiyoClient({ baseUrl: url, token });
  const organization = await answered(api.GET('/api/v1/organization'));
  const file = configFile();
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ url, token } satisfies Saved), { mode: 0o600 });
  // An existing file keeps its mode on write: the token is a secret either way.
  await chmod(file, 0o600);
  process.stderr.write(`${text('cli.loggedIn', { organization: organization?.name ?? '', file })}\n`);
}

async function origins(action: string | undefined, id: string | undefined, file: string | undefined) {
  const api = await client();
  if (action === 'list') {
    const listed: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await answered(api.GET('/api/v1/origins', { params: { query: { limit: 200, cursor } } }));
      listed.push(...page.origins);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return print(listed);
  }
  if (action === 'create' && file) {
    const body = (await readDocument(file)) as never;
    return print(await answered(api.POST('/api/v1/origins', { body })));
  }
  if (action === 'copy' && id) {
    const path = { originID: Number(id) };
    return print(await answered(api.POST('/api/v1/origins/{originID}/copy', { params: { path }, body: {} })));
  }
  if (action === 'rotate-secret' && id) {
    const path = { originID: Number(id) };
    return print(await answered(api.POST('/api/v1/origins/{originID}/signing-secret', { params: { path } })));
  }
  if (action === 'update' && id && file) {
    const path = { originID: Number(id) };
    // If-Match: refused (412) rather than overwriting a change made since this read.
    const read = await api.GET('/api/v1/origins/{originID}', { params: { path } });
    if (!read.response.ok) throw new CliError(describeFailure(read.error, read.response.status));
    const etag = read.response.headers.get('etag') ?? '';
    const body = (await readDocument(file)) as never;
    return print(
      await answered(
        api.PUT('/api/v1/origins/{originID}', { params: { path, header: { 'If-Match': etag } }, body }),
      ),
    );
  }
  throw usage();
}

/** Runs one command line; the exit status. */
export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        token: { type: 'string' },
        url: { type: 'string', default: 'http://localhost:8080' },
        file: { type: 'string', short: 'f' },
      },
    });
  } catch {
    process.stderr.write(`${usage().message}\n`);
    return 1;
  }
  const { positionals, values } = parsed;
  const [command, action, argument] = positionals;
  try {
    if (command === 'login') await login(values.token, values.url);
    else if (command === 'origins') await origins(action, argument, values.file);
    else if (command === 'purge' && action) {
      const api = await client();
      print(await answered(api.POST('/api/cache.delete', { body: { url: action } })));
    } else if (command === 'usage') {
      print(await answered((await client()).GET('/api/v1/usage')));
    } else throw usage();
    return 0;
  } catch (error) {
    if (error instanceof CliError) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    if (error instanceof TypeError && error.message === 'fetch failed') {
      const { url } = await saved().catch(() => ({ url: values.url }));
      process.stderr.write(`${text('cli.unreachable', { url, reason: String(error.cause ?? error) })}\n`);
      return 1;
    }
    throw error;
  }
}
