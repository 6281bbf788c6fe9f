// `expires=` parameter (RFC 3339) and the cache lifetime of a delivered image.

import HttpCachePolicy from 'http-cache-semantics';

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

// Years before 1970 mean nothing for an expiry and years past 9999 cannot be printed back in
// the same four-digit form, so both are refused to keep parse and print exact inverses.
const LATEST = daysFromCivil(10000, 1, 1) * 86400;

/** Unix seconds of an RFC 3339 instant, or null. Fractions of a second are dropped (as ImageFlux does). */
export function parseExpires(value: string): number | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const zone = m[7] ?? 'Z';
  let offset = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const zoneHours = Number(zone.slice(1, 3));
    const zoneMinutes = Number(zone.slice(4, 6));
    if (zoneHours > 23 || zoneMinutes > 59) return null;
    offset = (zone.startsWith('-') ? -1 : 1) * (zoneHours * 3600 + zoneMinutes * 60);
  }
  const seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset;
  return seconds >= 0 && seconds < LATEST ? seconds : null;
}

/** `YYYY-MM-DDTHH:MM:SSZ`, the form go-imageflux prints. */
export function formatExpires(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** True from the expiry instant on (an URL expiring "now" is already refused). */
export function isExpired(expires: number | undefined, now: Date): boolean {
  return expires !== undefined && now.getTime() >= expires * 1000;
}

export interface CachePolicyInput {
  now: Date;
  /** The origin's fallback lifetime when its response carries no cache headers; 0 disables it. */
  defaultCacheSeconds: number;
  originCacheControl?: string | null;
  originExpires?: string | null;
  /** The origin's `Age`: how long its answer already sat in caches on the way. */
  originAge?: string | null;
  /** The origin's `Date`, which its `Expires` counts from (unset: `now`). */
  originDate?: string | null;
  /** Unix seconds from the `expires=` parameter. */
  expires?: number;
}

export interface CachePolicy {
  /** Seconds a cache may keep the response; 0 means do not reuse it. */
  maxAge: number;
  cacheControl: string;
  /** HTTP-date for the Expires header. */
  expires: string;
  /**
   * Seconds past maxAge a stale copy may still be served while the origin fails: the origin's
   * `stale-if-error`, 0 under `must-revalidate` / `proxy-revalidate`; undefined when it says
   * nothing (a stale copy then beats an error page for as long as it is kept).
   */
  staleIfError?: number;
}

/** Stands for every request: the edge fetches originals without credentials or conditions. */
const ORIGIN_REQUEST = { method: 'GET', url: '/', headers: {} };

/**
 * Lifetime of a delivered image, as a shared cache reads the origin's headers (RFC 9111 through
 * `http-cache-semantics`: s-maxage before max-age before Expires against the origin's Date,
 * less its Age; no-cache, private and proxy-revalidate give nothing). Without explicit freshness,
 * defaultCacheSeconds applies (less the Age too) instead of a heuristic on Last-Modified. The
 * `expires=` parameter can only shorten that, so caches stop serving the image when the URL dies.
 */
export function cachePolicy(input: CachePolicyInput): CachePolicy {
  const nowSeconds = Math.floor(input.now.getTime() / 1000);
  const cacheControl = input.originCacheControl ?? '';
  const headers: Record<string, string> = { date: input.originDate || input.now.toUTCString() };
  if (cacheControl) headers['cache-control'] = cacheControl;
  if (input.originExpires) headers.expires = input.originExpires;
  if (input.originAge) headers.age = input.originAge;
  const policy = new HttpCachePolicy(
    ORIGIN_REQUEST,
    { status: 200, headers },
    { shared: true, cacheHeuristic: 0, immutableMinTimeToLive: 0 },
  );
  const directives = parseCacheControl(cacheControl);
  const noStore = directives.has('no-store');
  // What the origin said about freshness, if anything; silence is what defaultCache is for.
  const explicit =
    !policy.storable() ||
    ['max-age', 's-maxage', 'no-cache'].some((name) => directives.has(name)) ||
    Boolean(input.originExpires);
  const lifetime = explicit ? policy.maxAge() : Math.max(0, input.defaultCacheSeconds);
  // Rounded: the library also counts the microseconds since the policy was made as age.
  let maxAge = Math.max(0, Math.round(lifetime - policy.age()));
  if (input.expires !== undefined) maxAge = Math.min(maxAge, Math.max(0, input.expires - nowSeconds));
  const staleIfError =
    directives.has('must-revalidate') || directives.has('proxy-revalidate')
      ? 0
      : directives.has('stale-if-error')
        ? secondsOf(directives.get('stale-if-error'))
        : undefined;
  return {
    maxAge,
    cacheControl: noStore ? 'no-store' : maxAge > 0 ? `public, max-age=${maxAge}` : 'no-cache',
    expires: new Date((nowSeconds + maxAge) * 1000).toUTCString(),
    ...(staleIfError === undefined ? {} : { staleIfError }),
  };
}

/** A delta-seconds value; anything else means none (RFC 9111 4.2.1). */
function secondsOf(value: string | undefined): number {
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : 0;
}

function parseCacheControl(header: string): Map<string, string> {
  const directives = new Map<string, string>();
  for (const part of header.split(',')) {
    const [name = '', value = ''] = part.split('=', 2).map((s) => s.trim());
    if (name) directives.set(name.toLowerCase(), value.replace(/^"(.*)"$/, '$1'));
  }
  return directives;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm), avoiding
// Date.UTC's mapping of years 0..99 onto 1900..1999.
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}
