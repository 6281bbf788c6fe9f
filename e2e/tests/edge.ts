import { request } from 'node:http';
import { EDGE_PORT } from '../support/fixtures.ts';

/** Headers and paths of ui-api calls made with a page's cookies (page.request). */
export const UI_API = { 'X-Requested-With': 'XMLHttpRequest' };
export const api = (operation: string) => `/.ui-api/${operation}?api-version=2.29`;

/** One GET through the image edge, with the origin's generated name as Host. */
export function fetchFromEdge(
  host: string,
  path: string,
): Promise<{ status: number; contentType: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: EDGE_PORT, path, headers: { host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type'] ?? ''),
          body: Buffer.concat(chunks),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}
