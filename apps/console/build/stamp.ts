import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** The built console, which the server serves. */
export const DIST = join(ROOT, 'apps/console/dist');
/** Written beside the build output when a build finishes; the server does not serve dot files. */
export const STAMP_FILE = '.build-stamp';

/**
 * What a build of the console reads, relative to ROOT: its sources and static files, its
 * package, Vite and TypeScript settings, these build scripts, the contract package it imports,
 * and the lockfile (every dependency's version). Tests are left out: they change no output.
 */
const INPUTS = [
  'apps/console/src',
  'apps/console/public',
  'apps/console/build',
  'apps/console/index.html',
  'apps/console/package.json',
  'apps/console/vite.config.ts',
  'apps/console/tsconfig.json',
  'packages/contract/src',
  'packages/contract/package.json',
  'tsconfig.base.json',
  'package-lock.json',
];

const isTest = (path: string) => /\.test\.tsx?$/.test(path);

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .map((name) => join(path, name))
    .filter((file) => statSync(file).isFile() && !isTest(file));
}

/**
 * The hash of everything a console build depends on, VITE_ variables of the environment
 * included (Vite writes them into the bundle). Equal stamps mean an equal build.
 */
export function consoleStamp(root = ROOT, env: NodeJS.ProcessEnv = process.env): string {
  const hash = createHash('sha256');
  const files = INPUTS.flatMap((input) => filesUnder(join(root, input)))
    .map((file) => ({ file, name: relative(root, file).split(sep).join('/') }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const { file, name } of files) {
    hash.update(`${name}\0`);
    hash.update(createHash('sha256').update(readFileSync(file)).digest());
  }
  for (const [key, value] of Object.entries(env)
    .filter(([key]) => key.startsWith('VITE_'))
    .sort(([a], [b]) => (a < b ? -1 : 1)))
    hash.update(`env ${key}=${value}\0`);
  return hash.digest('hex');
}

/** The stamp of the build in `dist`, or null when there is none (never built, or a build failed). */
export function readStamp(dist = DIST): string | null {
  try {
    return readFileSync(join(dist, STAMP_FILE), 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** Whether `npm start` must build the console first: no complete build, or one of other sources. */
export function needsBuild(dist: string, current: string): boolean {
  return !existsSync(join(dist, 'index.html')) || readStamp(dist) !== current;
}
