import { MAX_SIDE } from '@ukiyo/imaging';
import { describe, expect, it } from 'vitest';
import { applyClientHints } from './client-hints.ts';

describe('applyClientHints', () => {
  it('takes the width from Width hints when the URL gives no size, in device pixels', () => {
    expect(applyClientHints({ q: 80 }, { 'sec-ch-width': '640' })).toEqual({
      params: { q: 80, w: 650 },
      vary: ['Sec-CH-Width', 'Width'],
    });
    // The standard name wins over the legacy one; dpr is not applied on top.
    expect(applyClientHints({ dpr: 2 }, { 'sec-ch-width': '300', width: '900' }).params).toEqual({ w: 300 });
    expect(applyClientHints({}, { width: '1' }).params).toEqual({ w: 50 });
    expect(applyClientHints({}, { width: '100000' }).params).toEqual({ w: MAX_SIDE });
  });

  it('multiplies a size the URL gives by DPR hints, rounded within 1..4', () => {
    const vary = ['Sec-CH-DPR', 'DPR'];
    expect(applyClientHints({ w: 200 }, { 'sec-ch-dpr': '2.625' })).toEqual({
      params: { w: 200, dpr: 2.6 },
      vary,
    });
    expect(applyClientHints({ h: 200 }, { dpr: '9' }).params).toEqual({ h: 200, dpr: 4 });
    // Below 1 is 1, the default: the same variant as no hint at all.
    expect(applyClientHints({ w: 200 }, { dpr: '0.5' })).toEqual({ params: { w: 200 }, vary });
    // Width is not used once the URL has a size.
    expect(applyClientHints({ w: 200 }, { width: '800' })).toEqual({ params: { w: 200 }, vary });
  });

  it('never overrides the URL and ignores what is not a positive number', () => {
    expect(applyClientHints({ w: 200, dpr: 1.5 }, { 'sec-ch-dpr': '3' })).toEqual({
      params: { w: 200, dpr: 1.5 },
      vary: [],
    });
    for (const value of ['', 'abc', '-2', '0', '1e3', 'Infinity', '2,3']) {
      expect(applyClientHints({ w: 100 }, { 'sec-ch-dpr': value }).params).toEqual({ w: 100 });
      expect(applyClientHints({}, { 'sec-ch-width': value }).params).toEqual({});
    }
  });
});
