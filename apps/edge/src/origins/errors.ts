/**
 * Why an origin fetch failed, mapped by the server to a status: missing 404, forbidden
 * (SSRF guard) and failures 502, timeout 504, too large 422.
 */
export type OriginErrorKind = 'not-found' | 'forbidden' | 'failed' | 'timeout' | 'too-large';

export class OriginError extends Error {
  constructor(
    readonly kind: OriginErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'OriginError';
  }
}

/** What the origin said of an original's freshness and version, with or without its bytes. */
export interface OriginHeaders {
  cacheControl: string | null;
  expires: string | null;
  /** HTTP origins' `Age` and `Date`, which the cache policy counts freshness with. */
  age?: string | null;
  date?: string | null;
  /** The original's version as the origin names it (`ETag`, `Last-Modified`), when it does. */
  validators?: OriginValidators;
}

export interface OriginValidators {
  etag?: string;
  lastModified?: string;
}

export interface FetchedImage extends OriginHeaders {
  data: Buffer;
}

/**
 * The origin's answer to a fetch conditional on `validators` (304 Not Modified): the edge's
 * copy is still the original's, fresh again by these headers.
 */
export interface Unchanged extends OriginHeaders {
  unchanged: true;
}

/** A version's validators, or none when the origin named none. */
export function validatorsOf(etag: string | undefined, lastModified: string | undefined) {
  if (!etag && !lastModified) return {};
  return {
    validators: { ...(etag ? { etag } : {}), ...(lastModified ? { lastModified } : {}) },
  } satisfies Pick<OriginHeaders, 'validators'>;
}

/** An origin's answer as origin.check reports it; `bytes` counts the body read, at most the check's limit. */
export interface OriginProbe {
  status: number;
  contentType: string | null;
  bytes: number;
  /** The body went on past the bytes read. */
  truncated: boolean;
}

export interface OriginLimits {
  timeoutMs: number;
  maxBytes: number;
}

/**
 * Reads a body stream up to a size limit. With the length the sender declared, into one
 * buffer of that size as the chunks arrive (no list of chunks concatenated into a second
 * copy: a miss's original is the largest thing the edge allocates); a body that turns out
 * longer is refused like any too large, a shorter one is answered as far as it came.
 */
export async function readLimited(
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
  what: string,
  declaredLength?: number,
): Promise<Buffer> {
  const tooLarge = () => new OriginError('too-large', `${what} exceeds ${maxBytes} bytes`);
  if (declaredLength && declaredLength <= maxBytes) {
    const data = Buffer.allocUnsafe(declaredLength);
    let size = 0;
    for await (const chunk of body) {
      if (size + chunk.length > declaredLength) throw tooLarge();
      data.set(chunk, size);
      size += chunk.length;
    }
    return data.subarray(0, size);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
