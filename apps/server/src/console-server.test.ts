import { operations } from '@ukiyo/contract';
import { describe, expect, it } from 'vitest';
import { ORIGIN_CHANGES } from './console-server.ts';

/** The origin operations that only read: the edges have nothing to load after them. */
const ORIGIN_READS = new Set(['origin.get', 'origin.list', 'origin.list_minimum', 'origin.check']);

describe('ORIGIN_CHANGES', () => {
  it('names every origin operation that writes, so that edges load its result at once', () => {
    const origins = Object.keys(operations).filter((name) => name.startsWith('origin.'));
    expect(origins.filter((name) => !ORIGIN_READS.has(name) && !ORIGIN_CHANGES.test(name))).toEqual([]);
    expect([...ORIGIN_READS].filter((name) => ORIGIN_CHANGES.test(name))).toEqual([]);
  });
});
