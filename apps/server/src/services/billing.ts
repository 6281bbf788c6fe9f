import { invalid } from '../http/app-error.ts';
import type { Db } from '../db/database.ts';

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

export interface PlanPrice {
  plan: number;
  currency: string;
  monthlyFee: number;
  includedRequests: number;
  includedBytes: number;
  per10kRequests: number;
  perGiB: number;
}

/** Every plan's row of plan_prices, the one place prices live, smallest plan first. */
export async function planPrices(db: Db): Promise<PlanPrice[]> {
  const rows = await db.selectFrom('plan_prices').selectAll().orderBy('plan').execute();
  return rows.map((row) => ({
    plan: row.plan,
    currency: row.currency,
    monthlyFee: Number(row.monthly_fee),
    includedRequests: Number(row.included_requests),
    includedBytes: Number(row.included_bytes),
    per10kRequests: Number(row.per_10k_requests),
    perGiB: Number(row.per_gib),
  }));
}

/** A plan's prices; undefined for a plan without a row. */
export async function planPrice(db: Db, plan: number): Promise<PlanPrice | undefined> {
  return (await planPrices(db)).find((price) => price.plan === plan);
}

/** A month's charge: the fee, and requests and traffic beyond what it includes, in the currency's minor unit. */
export function costOf(price: PlanPrice, usage: { requests: number; outboundBytes: number }): number {
  const requests = Math.max(0, usage.requests - price.includedRequests);
  const bytes = Math.max(0, usage.outboundBytes - price.includedBytes);
  const amount = price.monthlyFee + (requests / 10_000) * price.per10kRequests + (bytes / GIB) * price.perGiB;
  const digits =
    new Intl.NumberFormat('en', { style: 'currency', currency: price.currency }).resolvedOptions()
      .maximumFractionDigits ?? 2;
  return Math.round(amount * 10 ** digits) / 10 ** digits;
}

/** The usage so far carried on at the same pace to the end of [from, to). */
export function projectToEnd(
  usage: { requests: number; outboundBytes: number },
  period: { from: Date; to: Date },
  now = new Date(),
): { requests: number; outboundBytes: number } {
  const elapsed = Math.min(
    1,
    (now.getTime() - period.from.getTime()) / (period.to.getTime() - period.from.getTime()),
  );
  if (elapsed <= 0) return { requests: 0, outboundBytes: 0 };
  return {
    requests: Math.round(usage.requests / elapsed),
    outboundBytes: Math.round(usage.outboundBytes / elapsed),
  };
}
