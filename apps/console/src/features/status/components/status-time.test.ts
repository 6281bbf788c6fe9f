import { describe, expect, it } from 'vitest';
import { formatJapanTime, fromJapanInput, toJapanInput } from './status-time.ts';

describe('status times in Japan time', () => {
  it('shows an instant in Japan time with the offset, in both languages', () => {
    expect(formatJapanTime('2025-07-13T16:30:00Z', 'ja')).toBe('2025/07/14 01:30 (UTC+9)');
    expect(formatJapanTime('2025-07-13T16:30:00Z', 'en')).toBe('14 Jul 2025 01:30 (UTC+9)');
    expect(formatJapanTime('not a date', 'ja')).toBe('not a date');
  });

  it('round-trips datetime-local values read as Japan time', () => {
    expect(toJapanInput('2025-12-31T15:05:00.000Z')).toBe('2026-01-01T00:05');
    expect(fromJapanInput('2026-01-01T00:05')).toBe('2025-12-31T15:05:00.000Z');
    expect(fromJapanInput('2025-02-30T10:00')).toBeNull();
    expect(fromJapanInput('')).toBeNull();
  });
});
