import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import {
  CSV_BOM,
  buildCsv,
  clampDay,
  clampMonth,
  compareMonths,
  currentMonth,
  daysInMonth,
  formatBytes,
  formatGiB,
  formatMoney,
  monthDays,
  monthPeriod,
  parseYearMonth,
  shiftMonth,
  splitDuration,
  toGiB,
} from './usage-format.ts';

describe('billing periods', () => {
  it('are calendar months in UTC, the end exclusive', () => {
    expect(monthPeriod(2025, 7)).toEqual({
      year: 2025,
      month: 7,
      from: '2025-07-01T00:00:00.000Z',
      to: '2025-08-01T00:00:00.000Z',
      days: 31,
    });
    expect(monthPeriod(2025, 12).to).toBe('2026-01-01T00:00:00.000Z');
  });

  it('clamp the month to 1..12', () => {
    expect(clampMonth(0)).toBe(1);
    expect(clampMonth(13)).toBe(12);
    expect(clampMonth(Number.NaN)).toBe(1);
    expect(monthPeriod(2025, 14).from).toBe('2025-12-01T00:00:00.000Z');
    expect(monthPeriod(2025, -3).from).toBe('2025-01-01T00:00:00.000Z');
  });

  it('clamp the day to the days of the month', () => {
    expect(daysInMonth(2024, 2)).toBe(29);
    expect(daysInMonth(2025, 2)).toBe(28);
    expect(clampDay(2025, 2, 31)).toBe(28);
    expect(clampDay(2024, 2, 30)).toBe(29);
    expect(clampDay(2025, 4, 31)).toBe(30);
    expect(clampDay(2025, 4, 0)).toBe(1);
    expect(clampDay(2025, 1, 15)).toBe(15);
  });

  it('take the current month in UTC, not Japan time', () => {
    // 08:59 on 1 August in Japan is still July in UTC.
    expect(currentMonth(new Date('2025-07-31T23:59:00Z'))).toEqual({ year: 2025, month: 7 });
    expect(currentMonth(new Date('2025-08-01T00:00:00Z'))).toEqual({ year: 2025, month: 8 });
  });

  it('step across years', () => {
    expect(shiftMonth({ year: 2025, month: 1 }, -1)).toEqual({ year: 2024, month: 12 });
    expect(shiftMonth({ year: 2025, month: 12 }, 1)).toEqual({ year: 2026, month: 1 });
    expect(compareMonths({ year: 2025, month: 1 }, { year: 2024, month: 12 })).toBeGreaterThan(0);
  });

  it('read a month from URL parameters with fallbacks', () => {
    const fallback = { year: 2025, month: 7 };
    expect(parseYearMonth(null, null, fallback)).toEqual(fallback);
    expect(parseYearMonth('2024', '13', fallback)).toEqual({ year: 2024, month: 12 });
    expect(parseYearMonth('x', '0', fallback)).toEqual({ year: 2025, month: 1 });
    expect(parseYearMonth('1990', '', fallback)).toEqual({ year: 2000, month: 7 });
  });

  it('list the days of a month as the API names them', () => {
    const days = monthDays(2024, 2);
    expect(days).toHaveLength(29);
    expect(days[0]).toBe('2024-02-01');
    expect(days.at(-1)).toBe('2024-02-29');
  });
});

describe('units', () => {
  it('show traffic in GiB with two decimals', () => {
    expect(toGiB(0)).toBe(0);
    expect(toGiB(1024 ** 3 * 1.234)).toBe(1.23);
    expect(toGiB(1024 ** 3 * 1.235 + 1)).toBe(1.24);
    expect(formatGiB(0, 'en')).toBe('0.00');
    expect(formatGiB(1024 ** 3 * 1234.5, 'ja')).toBe('1,234.50');
    expect(formatGiB(5_000_000, 'en')).toBe('0.00');
  });

  it('split durations into hours, minutes and seconds', () => {
    expect(splitDuration(0)).toEqual({ hours: 0, minutes: 0, seconds: 0 });
    expect(splitDuration(3661)).toEqual({ hours: 1, minutes: 1, seconds: 1 });
    expect(splitDuration(90_061.9)).toEqual({ hours: 25, minutes: 1, seconds: 1 });
    expect(splitDuration(-5)).toEqual({ hours: 0, minutes: 0, seconds: 0 });
  });
});

describe('CSV', () => {
  it('starts with a BOM, quotes what needs quoting and parses back', () => {
    const csv = buildCsv(
      ['memberId', 'serviceCd', 'name', 'transferGiB'],
      [
        ['M1', 's-1', 'Acme, "Tokyo"', 1.5],
        ['M2', 's-2', '浮世\n画像', 0],
      ],
    );
    expect(csv.startsWith(CSV_BOM)).toBe(true);
    expect(csv).toContain('\r\n');
    expect(csv).toContain('"Acme, ""Tokyo"""');
    const parsed = Papa.parse<string[]>(csv.slice(1), { skipEmptyLines: true });
    expect(parsed.data).toEqual([
      ['memberId', 'serviceCd', 'name', 'transferGiB'],
      ['M1', 's-1', 'Acme, "Tokyo"', '1.5'],
      ['M2', 's-2', '浮世\n画像', '0'],
    ]);
  });

  it('neutralises cells a spreadsheet would run as formulas', () => {
    const csv = buildCsv(['name'], [['=HYPERLINK("x")']]);
    expect(csv).not.toMatch(/\r\n"?=/);
  });
});

describe('analytics and cost figures', () => {
  it('write bytes in the largest decimal unit that keeps the number at least 1', () => {
    expect(formatBytes(0, 'en')).toBe('0 byte');
    expect(formatBytes(999, 'en')).toBe('999 byte');
    expect(formatBytes(12_345, 'en')).toBe('12.3 kB');
    expect(formatBytes(-2_500_000, 'en')).toBe('-2.5 MB');
    expect(formatBytes(3.2e12, 'ja')).toBe('3.2 TB');
  });

  it('write amounts in their currency', () => {
    expect(formatMoney(300_000, 'JPY', 'en')).toBe('¥300,000');
    expect(formatMoney(12.5, 'USD', 'en')).toBe('$12.50');
  });
});
