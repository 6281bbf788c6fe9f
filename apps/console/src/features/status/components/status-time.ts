/**
 * Status times are shown in Japan time with the offset written out (console-spec section 9:
 * Japan time is UTC+9, no daylight saving), whatever the reader's own zone, so an
 * announcement reads the same for everyone.
 */
export const JAPAN_OFFSET_MINUTES = 9 * 60;
const OFFSET_MS = JAPAN_OFFSET_MINUTES * 60_000;

const pad = (n: number) => String(n).padStart(2, '0');

/** Japan time parts of an instant. */
function japanParts(iso: string): { y: number; mo: number; d: number; h: number; mi: number } | null {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return null;
  const japan = new Date(time + OFFSET_MS);
  return {
    y: japan.getUTCFullYear(),
    mo: japan.getUTCMonth() + 1,
    d: japan.getUTCDate(),
    h: japan.getUTCHours(),
    mi: japan.getUTCMinutes(),
  };
}

/** `2025/07/14 10:00 (UTC+9)` in Japanese, `14 Jul 2025 10:00 (UTC+9)` in English. */
export function formatJapanTime(iso: string, language: string): string {
  const p = japanParts(iso);
  if (!p) return iso;
  const time = `${pad(p.h)}:${pad(p.mi)}`;
  if (language === 'en') {
    const month = new Date(Date.UTC(2000, p.mo - 1, 1)).toLocaleString('en-GB', {
      month: 'short',
      timeZone: 'UTC',
    });
    return `${p.d} ${month} ${p.y} ${time} (UTC+9)`;
  }
  return `${p.y}/${pad(p.mo)}/${pad(p.d)} ${time} (UTC+9)`;
}

/** The value of a `datetime-local` input showing an instant in Japan time. */
export function toJapanInput(iso: string): string {
  const p = japanParts(iso);
  return p ? `${p.y}-${pad(p.mo)}-${pad(p.d)}T${pad(p.h)}:${pad(p.mi)}` : '';
}

/** A `datetime-local` value read as Japan time, as an ISO instant; null when empty or invalid. */
export function fromJapanInput(value: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(value);
  if (!m) return null;
  const [y, mo, d, h, mi] = m.slice(1).map(Number) as [number, number, number, number, number];
  const time = Date.UTC(y, mo - 1, d, h, mi) - OFFSET_MS;
  const check = new Date(time + OFFSET_MS);
  if (check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59) return null;
  return new Date(time).toISOString();
}
