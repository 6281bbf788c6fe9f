import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MESSAGES } from '@ukiyo/contract';
import { shellTexts } from './catalogue-shell.ts';

const source = (path: string) => readFileSync(new URL(`../src/${path}`, import.meta.url), 'utf8');
const catalogue = (language: string) =>
  JSON.parse(source(`locales/${language}/translation.json`)) as Record<string, string>;

describe('shellTexts', () => {
  it('keeps only the keys under the shell’s prefixes', () => {
    expect(shellTexts({ 'common.loading': 'a', 'rootError.body': 'b', 'origin.name': 'c' })).toEqual({
      'common.loading': 'a',
      'rootError.body': 'b',
    });
  });

  // What renders before the whole catalogue has loaded: the loading screen and the root error
  // page. A text of theirs outside the cut would show as its key on a slow or failed load.
  it('holds every text of the loading screen and the root error page', () => {
    for (const language of ['ja', 'en']) {
      const shell = shellTexts(catalogue(language));
      const loadingScreen = source('app/root-layout.tsx').split('export function LoadingScreen')[1] ?? '';
      for (const code of [loadingScreen, source('app/root-error.tsx')]) {
        const keys = [...code.matchAll(/\bt\('([^']+)'/g)].map((match) => match[1]!);
        expect(keys.length).toBeGreaterThan(0);
        for (const key of keys)
          expect(Object.hasOwn(shell, key) || Object.hasOwn(MESSAGES, key), key).toBe(true);
      }
    }
  });
});
