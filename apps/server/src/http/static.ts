import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import type { Hono } from 'hono';
import { inlineScriptHashes } from './security.ts';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
};

/** The precompressed variants the build writes beside a file, best first. */
const ENCODINGS = [
  { name: 'br', suffix: '.br' },
  { name: 'gzip', suffix: '.gz' },
] as const;
type Encoding = (typeof ENCODINGS)[number]['name'];

interface Representation {
  body: Uint8Array<ArrayBuffer>;
  etag: string;
  encoding?: Encoding;
}

interface StaticFile {
  /** Identity first, then the variants found beside it. */
  representations: Representation[];
  etags: string[];
  contentType: string;
  immutable: boolean;
}

function filesUnder(root: string): string[] {
  const paths: string[] = [];
  const walk = (directory: string) => {
    for (const name of readdirSync(directory)) {
      // Dot files (the build stamp) are the build's own.
      if (name.startsWith('.')) continue;
      const path = join(directory, name);
      if (statSync(path).isDirectory()) walk(path);
      else paths.push(path);
    }
  };
  walk(root);
  return paths;
}

function loadDirectory(root: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const paths = new Set(filesUnder(root));
  const isVariant = (path: string) =>
    ENCODINGS.some(({ suffix }) => path.endsWith(suffix) && paths.has(path.slice(0, -suffix.length)));
  for (const path of paths) {
    if (isVariant(path)) continue;
    const body = new Uint8Array(readFileSync(path));
    const hash = createHash('sha256').update(body).digest('base64url').slice(0, 27);
    const representations: Representation[] = [{ body, etag: `"${hash}"` }];
    for (const { name, suffix } of ENCODINGS) {
      // Each encoding is a representation of its own, so each has its own strong ETag.
      if (paths.has(path + suffix))
        representations.push({
          body: new Uint8Array(readFileSync(path + suffix)),
          etag: `"${hash}-${name}"`,
          encoding: name,
        });
    }
    const urlPath = `/${relative(root, path).split('\\').join('/')}`;
    files.set(urlPath, {
      representations,
      etags: representations.map((representation) => representation.etag),
      contentType: CONTENT_TYPES[extname(path)] ?? 'application/octet-stream',
      // Vite puts content-hashed names under /assets: they never change.
      immutable: urlPath.startsWith('/assets/'),
    });
  }
  return files;
}

/** The codings Accept-Encoding allows (q > 0), lower-cased; `*` stands for any other. */
function acceptedEncodings(header: string | undefined): (encoding: Encoding) => boolean {
  const weights = new Map<string, number>();
  for (const part of (header ?? '').split(',')) {
    const [coding, ...parameters] = part.trim().toLowerCase().split(';');
    if (!coding) continue;
    const q = parameters.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    weights.set(coding, q === undefined ? 1 : Number(q));
  }
  return (encoding) => {
    const weight = weights.get(encoding) ?? (encoding === 'gzip' ? weights.get('x-gzip') : undefined);
    return (weight ?? weights.get('*') ?? 0) > 0;
  };
}

/** Brotli when the client takes it, else gzip, else the file as it is. */
function negotiate(file: StaticFile, acceptEncoding: string | undefined): Representation {
  const accepts = acceptedEncodings(acceptEncoding);
  return (
    file.representations.find(
      (representation) => representation.encoding && accepts(representation.encoding),
    ) ?? file.representations[0]!
  );
}

function etagMatches(header: string | undefined, etags: string[]): boolean {
  if (!header) return false;
  return header.split(',').some((value) => value.trim() === '*' || etags.includes(value.trim()));
}

/**
 * The built console, held in memory (it is small and changes only with a deploy), each file
 * with the brotli and gzip variants its build wrote beside it (apps/console/build): br when
 * Accept-Encoding allows it, else gzip, else identity, with `Vary: Accept-Encoding`. Vite's
 * content-hashed /assets are immutable for a year; everything else is revalidated (`no-cache`,
 * ETag, 304). index.html answers `If-Match` with 412 when the deployed version differs: the
 * console's version check.
 * Any other path that is not a file gets index.html, for the SPA's own routes. Returns the
 * hashes of the pages' inline scripts, for the Content-Security-Policy.
 */
export function mountConsole(app: Hono, distDirectory: string): string[] {
  if (!existsSync(join(distDirectory, 'index.html'))) {
    app.get('*', (c) => c.text('The console is not built: run `npm run build:console`.', 503));
    return [];
  }
  const files = loadDirectory(distDirectory);
  const index = files.get('/index.html')!;

  app.on(['GET', 'HEAD'], '*', (c) => {
    const path = c.req.path;
    if (path.startsWith('/.ui-api/') || path.startsWith('/api/')) return c.notFound();
    const file = files.get(path) ?? (extname(path) === '' || path.endsWith('.html') ? index : undefined);
    if (!file) return c.notFound();
    const chosen = negotiate(file, c.req.header('accept-encoding'));
    const headers: Record<string, string> = { ETag: chosen.etag };
    if (file.representations.length > 1) headers.Vary = 'Accept-Encoding';
    // The version check: any encoding of the deployed index.html is that version.
    const ifMatch = c.req.header('if-match');
    if (ifMatch && !etagMatches(ifMatch, file.etags)) return c.body(null, 412, headers);
    headers['Content-Type'] = file.contentType;
    headers['Cache-Control'] = file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache';
    if (etagMatches(c.req.header('if-none-match'), [chosen.etag])) return c.body(null, 304, headers);
    if (chosen.encoding) headers['Content-Encoding'] = chosen.encoding;
    headers['Content-Length'] = String(chosen.body.length);
    if (c.req.method === 'HEAD') return c.body(null, 200, headers);
    return c.body(chosen.body, 200, headers);
  });
  const hashes = new Set<string>();
  for (const [path, file] of files) {
    if (path.endsWith('.html'))
      for (const hash of inlineScriptHashes(Buffer.from(file.representations[0]!.body).toString('utf8')))
        hashes.add(hash);
  }
  return [...hashes];
}
