import { invalid } from '../http/app-error.ts';

/**
 * Billing periods are calendar months in UTC (Japan time is UTC+9): usage at 08:00 JST on the
 * 1st belongs to the previous month.
 */
export function monthPeriodUtc(year: number, month: number): { from: Date; to: Date } {
  return { from: new Date(Date.UTC(year, month - 1, 1)), to: new Date(Date.UTC(year, month, 1)) };
}

export function currentMonthUtc(now = new Date()): { from: Date; to: Date } {
  return monthPeriodUtc(now.getUTCFullYear(), now.getUTCMonth() + 1);
}

export const GIB = 1024 ** 3;

/** Bytes as GiB with two decimals, the unit of invoices. */
export function toGiB(bytes: number): number {
  return Math.round((bytes / GIB) * 100) / 100;
}

export function isUtcMidnight(date: Date): boolean {
  return date.getTime() % 86_400_000 === 0;
}

export function dayKey(date: Date): string {
  return date.toISOString().slice(0, 10);
}

const MAX_RANGE_DAYS = 366;

/** A statistics period from the input: it must end after it starts and span at most a year. */
export function statisticsPeriod(input: { from: string; to: string }): { from: Date; to: Date } {
  const from = new Date(input.from);
  const to = new Date(input.to);
  if (to <= from || to.getTime() - from.getTime() > MAX_RANGE_DAYS * 86_400_000) {
    throw invalid('to', 'validation.invalid');
  }
  return { from, to };
}
