import { digest } from './cache/disk-cache.ts';

/**
 * The keys a CDN in front of the edge files an answer under, so it can purge what Ukiyo purges:
 * `o{originId}` (every image of an origin) and `o{originId}-{first 16 hex digits of the SHA-256
 * of the image path}` (every variant of one source image, the unit of a purge). The image path is
 * the one inside the origin, after its rules, percent-encoded as requested (`/images/a.jpg` of
 * `/w=200/images/a.jpg`). Short and ASCII, as Fastly's and Cloudflare's limits want. Fastly reads
 * `Surrogate-Key` (space-separated), Cloudflare `Cache-Tag` (comma-separated); both drop the
 * header before the client sees it.
 */
export function surrogateKeys(originId: number, imagePath: string): { spaced: string; commas: string } {
  const keys = [`o${originId}`, `o${originId}-${digest(imagePath).slice(0, 16)}`];
  return { spaced: keys.join(' '), commas: keys.join(',') };
}
