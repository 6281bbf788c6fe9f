import { describe, expect, it } from 'vitest';
import { DOCS_PAGES, DOCS_TREE, docsLanguage, docsPagePath, findDocsPage, neighbours } from './docs-tree.ts';

describe('docs tree', () => {
  it('holds every page of the spec and the pages added since, once', () => {
    expect(DOCS_PAGES.map((page) => page.slug)).toEqual([
      '',
      'design',
      'image/getting-started',
      'image/origin-settings',
      'image/conversion-parameters',
      'image/signed-url',
      'image/expire-limit',
      'image/custom-domain',
      'image/api-reference',
      'image/cache-purge',
      'image/whats-new',
      'live/quickstart',
      'live/api',
      'live/apierror',
      'live/archive',
      'live/webhooks',
      'live/encryption',
      'live/whip',
      'live/rtmp',
      'live/srt',
      'live/note',
      'live/hlsjs',
      'live/sora-2024-1',
      'live/changes',
      'wordpress',
      'general/platform-api',
      'general/api-reference',
      'general/permissions',
      'general/statistics',
      'general/audit',
    ]);
    expect(DOCS_PAGES.filter((page) => page.deprecated).map((page) => page.slug)).toEqual([
      'image/api-reference',
    ]);
    expect(DOCS_TREE.map((section) => section.id)).toEqual([
      'overview',
      'image',
      'live',
      'wordpress',
      'general',
    ]);
  });

  it('finds a page from the path below /docs/, however it is written', () => {
    expect(findDocsPage('')?.slug).toBe('');
    expect(findDocsPage('index')?.slug).toBe('');
    expect(findDocsPage('image/signed-url')?.slug).toBe('image/signed-url');
    expect(findDocsPage('/image/signed-url/')?.slug).toBe('image/signed-url');
    expect(findDocsPage('wordpress/')?.slug).toBe('wordpress');
    expect(findDocsPage('wordpress/index')?.slug).toBe('wordpress');
    expect(findDocsPage('live')?.slug).toBe('live/quickstart');
    expect(findDocsPage('image/nothing')).toBeNull();
  });

  it('builds the URL of each page and reads them back', () => {
    expect(docsPagePath(findDocsPage('')!)).toBe('/docs/');
    expect(docsPagePath(findDocsPage('wordpress')!)).toBe('/docs/wordpress/');
    expect(docsPagePath(findDocsPage('live/whip')!)).toBe('/docs/live/whip');
    for (const page of DOCS_PAGES) expect(findDocsPage(docsPagePath(page).slice('/docs/'.length))).toBe(page);
  });

  it('links pages in reading order', () => {
    const first = neighbours(DOCS_PAGES[0]!);
    expect(first.previous).toBeNull();
    expect(first.next?.slug).toBe('design');
    expect(neighbours(DOCS_PAGES.at(-1)!).next).toBeNull();
  });

  it('falls back to Japanese for other languages', () => {
    expect(docsLanguage('en')).toBe('en');
    expect(docsLanguage('ja')).toBe('ja');
    expect(docsLanguage('fr')).toBe('ja');
  });
});
