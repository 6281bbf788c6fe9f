import { describe, expect, it } from 'vitest';
import { formatDateTime, formatUtcDate, splitLinks } from './format.ts';

describe('formatDateTime', () => {
  it('shows minutes in the given zone, Japanese and English', () => {
    expect(formatDateTime('2025-07-14T03:04:05Z', 'ja', 'Asia/Tokyo')).toBe('2025/07/14 12:04');
    expect(formatDateTime('2025-07-14T03:04:05Z', 'en', 'UTC')).toBe('14/07/2025, 03:04');
  });

  it('keeps what it cannot read', () => {
    expect(formatDateTime('soon', 'ja')).toBe('soon');
  });
});

describe('formatUtcDate', () => {
  it('is the UTC calendar day, whatever the browser zone', () => {
    expect(formatUtcDate('2025-08-01T00:00:00.000Z', 'ja')).toBe('2025/08/01');
  });
});

describe('splitLinks', () => {
  it('separates addresses from the text around them', () => {
    expect(splitLinks('Open\nhttp://localhost:8080/activate/abc-_1. Thanks')).toEqual([
      { kind: 'text', value: 'Open\n' },
      { kind: 'link', value: 'http://localhost:8080/activate/abc-_1' },
      { kind: 'text', value: '. Thanks' },
    ]);
  });

  it('keeps query strings and leaves plain text alone', () => {
    expect(splitLinks('https://x.example/forget/?token=a_b')).toEqual([
      { kind: 'link', value: 'https://x.example/forget/?token=a_b' },
    ]);
    expect(splitLinks('no links')).toEqual([{ kind: 'text', value: 'no links' }]);
    expect(splitLinks('')).toEqual([]);
  });
});
