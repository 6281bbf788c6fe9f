// `expires=` parameter (RFC 3339) and the cache lifetime of a delivered image.

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
  /** Unix seconds from the `expires=` parameter. */
  expires?: number;
}

export interface CachePolicy {
  /** Seconds a cache may keep the response; 0 means do not reuse it. */
  maxAge: number;
  cacheControl: string;
  /** HTTP-date for the Expires header. */
  expires: string;
}

/**
 * Lifetime of a delivered image. The origin's own headers follow HTTP precedence (s-maxage,
 * then max-age, then Expires); without any, defaultCacheSeconds applies. The `expires=`
 * parameter can only shorten that, so caches stop serving the image when the URL dies.
 */
export function cachePolicy(input: CachePolicyInput): CachePolicy {
  const nowSeconds = Math.floor(input.now.getTime() / 1000);
  const directives = parseCacheControl(input.originCacheControl ?? '');
  const noStore = directives.has('no-store');
  let maxAge: number;
  if (noStore || directives.has('no-cache') || directives.has('private')) {
    maxAge = 0;
  } else {
    maxAge =
      originLifetime(directives, input.originExpires, input.now) ?? Math.max(0, input.defaultCacheSeconds);
  }
  if (input.expires !== undefined) maxAge = Math.min(maxAge, Math.max(0, input.expires - nowSeconds));
  maxAge = Math.floor(maxAge);
  const cacheControl = noStore ? 'no-store' : maxAge > 0 ? `public, max-age=${maxAge}` : 'no-cache';
  return { maxAge, cacheControl, expires: new Date((nowSeconds + maxAge) * 1000).toUTCString() };
}

function originLifetime(
  directives: Map<string, string>,
  expiresHeader: string | null | undefined,
  now: Date,
): number | undefined {
  const seconds = directives.get('s-maxage') ?? directives.get('max-age');
  // RFC 9111: an unparsable max-age or Expires means "already stale".
  if (seconds !== undefined) return /^\d+$/.test(seconds) ? Number(seconds) : 0;
  if (expiresHeader) {
    const at = Date.parse(expiresHeader);
    return Number.isNaN(at) ? 0 : Math.max(0, Math.floor((at - now.getTime()) / 1000));
  }
  return undefined;
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
