import { describe, expect, it } from 'vitest';
import { nextMonthStartUtc, planAction } from './plan-change.ts';

describe('planAction', () => {
  it('applies upgrades at once and postpones downgrades', () => {
    expect(planAction(1, 2)).toBe('upgrade');
    expect(planAction(1, 3)).toBe('upgrade');
    expect(planAction(3, 2)).toBe('downgrade');
    expect(planAction(2, 2)).toBe('current');
  });

  it('sends every change to or from Enterprise to sales', () => {
    expect(planAction(3, 4)).toBe('sales');
    expect(planAction(4, 1)).toBe('sales');
    expect(planAction(4, 4)).toBe('current');
  });
});

describe('nextMonthStartUtc', () => {
  it('is the first instant of the next UTC month, across years', () => {
    expect(nextMonthStartUtc(new Date('2025-07-14T10:00:00Z'))).toBe('2025-08-01T00:00:00.000Z');
    expect(nextMonthStartUtc(new Date('2025-12-31T23:59:59Z'))).toBe('2026-01-01T00:00:00.000Z');
  });

  it('counts in UTC even when Japan is already in the next month', () => {
    // 2025-07-31 20:00 UTC is 2025-08-01 05:00 in Japan: the change is still for August 1st.
    expect(nextMonthStartUtc(new Date('2025-07-31T20:00:00Z'))).toBe('2025-08-01T00:00:00.000Z');
  });
});
