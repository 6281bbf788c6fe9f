import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The route table imports every page (lazily); a page that imported it back, even through a
 * helper, would close a cycle through the whole console. Pages build URLs with `paths.ts` and
 * read their title from the router's match instead. Read from the source text, so the check
 * covers type-only and lazy imports too.
 */
const SOURCE_ROOT = resolve(import.meta.dirname, '..');
const ROUTE_TABLE = 'app/routes.ts';
const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*['"]([^'"]+)['"]/g;

const sourceFiles = new Set(
  readdirSync(SOURCE_ROOT, { recursive: true, encoding: 'utf8' }).filter((file) => /\.tsx?$/.test(file)),
);

/** The console source files a file imports, as paths below src (not packages, texts or styles). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(SOURCE_ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)]
    .map(([, specifier = '']) =>
      specifier.startsWith('@/')
        ? specifier.slice('@/'.length)
        : relative(SOURCE_ROOT, resolve(SOURCE_ROOT, dirname(file), specifier)),
    )
    .filter((imported) => sourceFiles.has(imported));
}

/** Every console file `file` reaches through its imports, itself included. */
function reachableFrom(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const imported of importsOf(file)) reachableFrom(imported, seen);
  return seen;
}

describe('the route table', () => {
  it('is imported by no feature file, not even through other modules', () => {
    const features = [...sourceFiles].filter((file) => file.startsWith('features/'));
    expect(features.length).toBeGreaterThan(50);
    expect(features.filter((file) => reachableFrom(file).has(ROUTE_TABLE))).toEqual([]);
  });

  it('is seen by the check where it is imported', () => {
    expect(reachableFrom('app/router.tsx').has(ROUTE_TABLE)).toBe(true);
  });
});
