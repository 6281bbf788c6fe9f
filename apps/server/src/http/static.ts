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

interface StaticFile {
  body: Uint8Array<ArrayBuffer>;
  etag: string;
  contentType: string;
  immutable: boolean;
}

function loadDirectory(root: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (directory: string) => {
    for (const name of readdirSync(directory)) {
      const path = join(directory, name);
      if (statSync(path).isDirectory()) {
        walk(path);
        continue;
      }
      const body = new Uint8Array(readFileSync(path));
      const urlPath = `/${relative(root, path).split('\\').join('/')}`;
      files.set(urlPath, {
        body,
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
        contentType: CONTENT_TYPES[extname(path)] ?? 'application/octet-stream',
        // Vite puts content-hashed names under /assets: they never change.
        immutable: urlPath.startsWith('/assets/'),
      });
    }
  };
  walk(root);
  return files;
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((value) => value.trim() === '*' || value.trim() === etag);
}

/**
 * The built console, held in memory (it is small and changes only with a deploy). index.html
 * answers `If-Match` with 412 when the deployed version differs: the console's version check.
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
    const ifMatch = c.req.header('if-match');
    if (ifMatch && !etagMatches(ifMatch, file.etag)) return c.body(null, 412, { ETag: file.etag });
    const headers = {
      ETag: file.etag,
      'Content-Type': file.contentType,
      'Cache-Control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    };
    if (etagMatches(c.req.header('if-none-match'), file.etag)) return c.body(null, 304, headers);
    if (c.req.method === 'HEAD') return c.body(null, 200, headers);
    return c.body(file.body, 200, headers);
  });
  const hashes = new Set<string>();
  for (const [path, file] of files) {
    if (path.endsWith('.html'))
      for (const hash of inlineScriptHashes(Buffer.from(file.body).toString('utf8'))) hashes.add(hash);
  }
  return [...hashes];
}
