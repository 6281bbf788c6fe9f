import { createHash } from 'node:crypto';

/** The sha256 sources of the inline scripts of an HTML page, for script-src. */
export function inlineScriptHashes(html: string): string[] {
  const hashes: string[] = [];
  for (const match of html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)) {
    hashes.push(`'sha256-${createHash('sha256').update(match[1]!).digest('base64')}'`);
  }
  return hashes;
}

/**
 * The console's Content-Security-Policy. Scripts only from the console itself plus the two
 * inline feature checks of index.html, by hash; no framing, no plugins, no <base>, forms only
 * to itself. Images, media and fetch() may reach any http(s) host: the preview tester and the
 * live player load customers' own delivery names and custom domains. Inline styles stay
 * allowed (charts and the markdown help set style attributes); they cannot run code.
 */
export function contentSecurityPolicy(scriptHashes: readonly string[]): string {
  return [
    "default-src 'self'",
    `script-src ${["'self'", ...scriptHashes].join(' ')}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob: http: https:",
    "media-src 'self' blob: http: https:",
    "connect-src 'self' http: https:",
    "worker-src 'self' blob:",
    "font-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}
