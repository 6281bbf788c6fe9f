// Client hints (Sec-CH-DPR, Sec-CH-Width and their legacy names DPR, Width), for origins that
// enable them: they fill in what the URL leaves open, never override it. Every value used
// becomes part of the parameters, so it keys the cached variant; values are bucketed so that
// a client cannot make the edge store one variant per pixel.

import type { IncomingHttpHeaders } from 'node:http';
import { MAX_SIDE, type ParsedParams } from '@ukiyo/imaging';

/** Sent with every image of an origin that honours hints: the browser sends them from then on. */
export const ACCEPT_CH = 'Sec-CH-DPR, Sec-CH-Width, DPR, Width';

/** DPR hints are rounded to one decimal within this range. */
export const DPR_RANGE = { min: 1, max: 4 } as const;
/** Width hints are rounded up to a multiple of this (a little larger is what srcset wants). */
export const WIDTH_STEP = 50;

export interface Hinted {
  params: ParsedParams;
  /** The hint headers the answer depends on, for `Vary`. */
  vary: string[];
}

/**
 * Without w and h the Width hint gives the width, in device pixels (so any dpr is dropped);
 * with a size but no dpr the DPR hint multiplies it like dpr=.
 */
export function applyClientHints(params: ParsedParams, headers: IncomingHttpHeaders): Hinted {
  if (params.w === undefined && params.h === undefined) {
    const vary = ['Sec-CH-Width', 'Width'];
    const width = hintOf(headers, 'sec-ch-width', 'width');
    if (width === undefined) return { params, vary };
    const hinted: ParsedParams = {
      ...params,
      w: Math.min(Math.ceil(width / WIDTH_STEP) * WIDTH_STEP, MAX_SIDE),
    };
    // Width counts device pixels already.
    delete hinted.dpr;
    return { params: hinted, vary };
  }
  if (params.dpr !== undefined) return { params, vary: [] };
  const vary = ['Sec-CH-DPR', 'DPR'];
  const dpr = hintOf(headers, 'sec-ch-dpr', 'dpr');
  if (dpr === undefined) return { params, vary };
  const bucket = Math.round(Math.min(Math.max(dpr, DPR_RANGE.min), DPR_RANGE.max) * 10) / 10;
  // dpr=1 is the default the grammar never keeps: the same variant as no hint.
  return { params: bucket === 1 ? params : { ...params, dpr: bucket }, vary };
}

/** The standard header's value, else the legacy one's; nothing unless a positive number. */
function hintOf(headers: IncomingHttpHeaders, standard: string, legacy: string): number | undefined {
  const raw = headers[standard] ?? headers[legacy];
  const text = Array.isArray(raw) ? raw[0] : raw;
  if (text === undefined || !/^\s*\d+(?:\.\d+)?\s*$/.test(text)) return undefined;
  const value = Number(text);
  return value > 0 ? value : undefined;
}
