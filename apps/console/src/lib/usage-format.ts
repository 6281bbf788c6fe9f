import Papa from 'papaparse';

/**
 * Usage as the console shows it (console-spec section 9): counted per billing period, one
 * calendar month in UTC (Japan time is UTC+9); traffic in GiB with two decimals; durations in
 * hours, minutes and seconds.
 */

export interface YearMonth {
  year: number;
  month: number;
}

export interface MonthPeriod extends YearMonth {
  /** The first instant of the month, UTC (ISO 8601): statistics.origins' `from`. */
  from: string;
  /** The first instant of the next month, UTC: statistics.origins' `to` (exclusive). */
  to: string;
  /** How many days the month has. */
  days: number;
}

export const MIN_YEAR = 2000;
export const MAX_YEAR = 2100;

function clamp(value: number, min: number, max: number): number {
  if (!Number.isFinite(value)) return min;
  return Math.min(max, Math.max(min, Math.trunc(value)));
}

export function clampMonth(month: number): number {
  return clamp(month, 1, 12);
}

export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, clampMonth(month), 0)).getUTCDate();
}

/** A day of the month, kept within the month's days (31 February becomes 28 or 29). */
export function clampDay(year: number, month: number, day: number): number {
  return clamp(day, 1, daysInMonth(year, month));
}

/** The billing period of a calendar month in UTC; the month is clamped to 1..12. */
export function monthPeriod(year: number, month: number): MonthPeriod {
  const y = clamp(year, MIN_YEAR, MAX_YEAR);
  const m = clampMonth(month);
  return {
    year: y,
    month: m,
    from: new Date(Date.UTC(y, m - 1, 1)).toISOString(),
    to: new Date(Date.UTC(y, m, 1)).toISOString(),
    days: daysInMonth(y, m),
  };
}

/** The UTC calendar month that contains `now`: the current billing period. */
export function currentMonth(now: Date = new Date()): YearMonth {
  return { year: now.getUTCFullYear(), month: now.getUTCMonth() + 1 };
}

/** The month `delta` months before (negative) or after `at`. */
export function shiftMonth(at: YearMonth, delta: number): YearMonth {
  const index = at.year * 12 + (clampMonth(at.month) - 1) + delta;
  return { year: Math.floor(index / 12), month: (index % 12) + 1 };
}

export function compareMonths(a: YearMonth, b: YearMonth): number {
  return a.year * 12 + a.month - (b.year * 12 + b.month);
}

/**
 * A month from URL parameters; missing or unreadable values fall back to `fallback`, the rest
 * are clamped (month 1..12, year within what the API accepts).
 */
export function parseYearMonth(
  year: string | null,
  month: string | null,
  fallback: YearMonth = currentMonth(),
): YearMonth {
  const y = year === null || year === '' ? Number.NaN : Number(year);
  const m = month === null || month === '' ? Number.NaN : Number(month);
  return {
    year: Number.isFinite(y) ? clamp(y, MIN_YEAR, MAX_YEAR) : fallback.year,
    month: Number.isFinite(m) ? clampMonth(m) : fallback.month,
  };
}

/** The days of a month as 'YYYY-MM-DD' (UTC), the keys of the daily statistics. */
export function monthDays(year: number, month: number): string[] {
  const { days, month: m, year: y } = monthPeriod(year, month);
  const prefix = `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-`;
  return Array.from({ length: days }, (_, index) => `${prefix}${String(index + 1).padStart(2, '0')}`);
}

export const GIB = 1024 ** 3;

/** Bytes as GiB rounded to two decimals (the unit of invoices). */
export function toGiB(bytes: number): number {
  return Math.round((bytes / GIB) * 100) / 100;
}

const LOCALES: Record<string, string> = { ja: 'ja-JP', en: 'en-GB' };
const localeOf = (language: string) => LOCALES[language] ?? LOCALES.ja!;

/** Bytes as a GiB figure with exactly two decimals and grouping, e.g. "1,234.50". */
export function formatGiB(bytes: number, language: string): string {
  return new Intl.NumberFormat(localeOf(language), {
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
  }).format(toGiB(bytes));
}

export function formatCount(value: number, language: string): string {
  return new Intl.NumberFormat(localeOf(language)).format(value);
}

const BYTE_UNITS = ['byte', 'kilobyte', 'megabyte', 'gigabyte', 'terabyte'] as const;

/** Bytes in the largest decimal unit that keeps the number at least 1 (12.3 MB), for analytics. */
export function formatBytes(bytes: number, language: string): string {
  let unit = 0;
  let value = Math.abs(bytes);
  while (value >= 1000 && unit < BYTE_UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  return new Intl.NumberFormat(language, {
    style: 'unit',
    unit: BYTE_UNITS[unit],
    maximumFractionDigits: unit === 0 ? 0 : 1,
  }).format(Math.sign(bytes) * value);
}

/** An amount in its currency as the screen's language writes it (¥300,000, ￥300,000). */
export function formatMoney(amount: number, currency: string, language: string): string {
  return new Intl.NumberFormat(language, { style: 'currency', currency }).format(amount);
}

/** Seconds as whole hours, minutes and seconds (hours are not folded into days). */
export function splitDuration(totalSeconds: number): { hours: number; minutes: number; seconds: number } {
  const total = Math.max(0, Math.floor(Number.isFinite(totalSeconds) ? totalSeconds : 0));
  return {
    hours: Math.floor(total / 3600),
    minutes: Math.floor((total % 3600) / 60),
    seconds: total % 60,
  };
}

export const CSV_BOM = '\uFEFF';

/**
 * A CSV document: CRLF lines, fields quoted when they need it (commas, quotes, line breaks),
 * cells that a spreadsheet would run as a formula neutralised, and a UTF-8 byte order mark so
 * spreadsheet programs in Japan read it as UTF-8 rather than Shift_JIS.
 */
export function buildCsv(fields: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  return (
    CSV_BOM +
    Papa.unparse(
      { fields: [...fields], data: rows.map((row) => [...row]) },
      { newline: '\r\n', escapeFormulae: true },
    )
  );
}

/** Hands a CSV document to the browser as a download. */
export function downloadCsv(filename: string, csv: string): void {
  const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv;charset=utf-8' }));
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = filename;
  anchor.style.display = 'none';
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  // Some browsers read the object URL after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** 'YYYY-MM' for file names. */
export function monthLabel({ year, month }: YearMonth): string {
  return `${year}-${String(month).padStart(2, '0')}`;
}
