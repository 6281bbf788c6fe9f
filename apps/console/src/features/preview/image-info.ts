import { isBlurhashValid } from 'blurhash';
import { useEffect, useState } from 'react';

/**
 * The fields of one image in the edge's `f=json` answer (docs: image/conversion-parameters), as
 * the types a parsed body must have. The edge's own declaration (packages/imaging, info.ts) is
 * not a dependency of the console: the type below is derived from this table, so the shape is
 * written once here and checked at run time, where an answer from the network needs it.
 */
const FACTS = {
  width: 'number',
  height: 'number',
  format: 'string',
  contentType: 'string',
  bytes: 'number',
  hasAlpha: 'boolean',
  frames: 'number',
  orientation: 'number',
} as const;

interface TypeNames {
  number: number;
  string: string;
  boolean: boolean;
}

/** One image in the `f=json` answer: width and height with its EXIF orientation applied. */
export type ImageFacts = { [Field in keyof typeof FACTS]: TypeNames[(typeof FACTS)[Field]] };

/** The `f=json` answer: the variant at the top level, the origin's file under `original`. */
export interface ImageInfo extends ImageFacts {
  dominantColor: string;
  blurhash: string;
  original: ImageFacts;
}

export type InfoState =
  | { state: 'loading' }
  /** `code`: the edge's Ukiyo-Error; empty when the edge sent something else than JSON. */
  | { state: 'failed'; status: number; code: string }
  | { state: 'loaded'; info: ImageInfo };

function isFacts(value: unknown): value is ImageFacts {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return Object.entries(FACTS).every(([key, type]) => typeof record[key] === type);
}

/** Whether a parsed body has the documented shape (an origin rule may keep `f` from counting). */
export function isImageInfo(value: unknown): value is ImageInfo {
  if (!isFacts(value)) return false;
  const record = value as unknown as Record<string, unknown>;
  return (
    typeof record.dominantColor === 'string' &&
    /^#[0-9a-f]{6}$/.test(record.dominantColor) &&
    typeof record.blurhash === 'string' &&
    isBlurhashValid(record.blurhash).result &&
    isFacts(record.original)
  );
}

/** Fetches the `f=json` answer of a variant (the edge answers with CORS). */
export function useImageInfo(url: string): InfoState {
  const [state, setState] = useState<InfoState>({ state: 'loading' });
  useEffect(() => {
    const controller = new AbortController();
    void (async () => {
      try {
        const response = await fetch(url, { signal: controller.signal });
        const type = response.headers.get('Content-Type') ?? '';
        const body: unknown =
          response.ok && type.startsWith('application/json') ? await response.json() : null;
        setState(
          isImageInfo(body)
            ? { state: 'loaded', info: body }
            : { state: 'failed', status: response.status, code: response.headers.get('Ukiyo-Error') ?? '' },
        );
      } catch {
        if (!controller.signal.aborted) setState({ state: 'failed', status: 0, code: '' });
      }
    })();
    return () => controller.abort();
  }, [url]);
  return state;
}
