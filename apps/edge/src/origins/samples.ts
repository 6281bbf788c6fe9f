import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { SAMPLE_ORIGIN_HOST } from '@ukiyo/contract';
import { OriginError, type FetchedImage, type OriginProbe } from './errors.ts';

const SAMPLES_DIR = fileURLToPath(new URL('../../samples/', import.meta.url));
const SAMPLE_NAME = /^\/[a-z0-9-]+\.(?:jpg|png|webp)$/;

/**
 * The images shipped in `apps/edge/samples`, served for origins whose HTTP host is the reserved
 * SAMPLE_ORIGIN_HOST (`.invalid` never resolves, so no real origin can mean it). They give the
 * guest preview and a new installation something to convert without any network access.
 */
export function isSampleHost(host: string): boolean {
  return host === SAMPLE_ORIGIN_HOST;
}

export async function fetchSample(path: string): Promise<FetchedImage> {
  // Flat names only: nothing outside the directory can be named.
  if (!SAMPLE_NAME.test(path)) throw new OriginError('not-found', 'no such sample image');
  try {
    const data = await readFile(SAMPLES_DIR + path.slice(1));
    return { data, cacheControl: 'public, max-age=86400', expires: null };
  } catch {
    throw new OriginError('not-found', 'no such sample image');
  }
}

const SAMPLE_TYPES: Record<string, string> = { jpg: 'image/jpeg', png: 'image/png', webp: 'image/webp' };

/** origin.check of a samples origin: the answer the edge's own fetch would give. */
export async function probeSample(path: string): Promise<OriginProbe> {
  try {
    const { data } = await fetchSample(path);
    const type = SAMPLE_TYPES[path.slice(path.lastIndexOf('.') + 1)] ?? null;
    return { status: 200, contentType: type, bytes: data.length, truncated: false };
  } catch {
    return { status: 404, contentType: null, bytes: 0, truncated: false };
  }
}
