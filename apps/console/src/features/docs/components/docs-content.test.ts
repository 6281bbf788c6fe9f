import { describe, expect, it } from 'vitest';
import { routePatterns } from '@/app/paths.ts';
import { parsePath } from '../../../../../../packages/imaging/src/grammar.ts';
import { signPath } from '../../../../../../packages/imaging/src/signing.ts';
import { DOCS_PAGES, findDocsPage, type DocsLanguage } from './docs-tree.ts';
import { headingIdsOf, linksOf } from './markdown.ts';

/** The console's own pages without parameters, e.g. /preview-guest: documents may send readers there. */
const CONSOLE_PATHS = new Set<string>(
  Object.values(routePatterns).filter((pattern) => !pattern.includes(':')),
);

const SOURCES = import.meta.glob<string>('../content/**/*.md', {
  query: '?raw',
  import: 'default',
  eager: true,
});
const LANGUAGES: DocsLanguage[] = ['ja', 'en'];
const sourceOf = (language: DocsLanguage, file: string) => SOURCES[`../content/${language}/${file}`];

describe('documentation content', () => {
  it('has every page of the tree in both languages, and no page outside it', () => {
    for (const language of LANGUAGES) {
      for (const page of DOCS_PAGES)
        expect(sourceOf(language, page.file), `${language}/${page.file}`).toBeTruthy();
    }
    const files = new Set(DOCS_PAGES.flatMap((page) => LANGUAGES.map((l) => `../content/${l}/${page.file}`)));
    expect(Object.keys(SOURCES).filter((path) => !files.has(path))).toEqual([]);
  });

  it('starts each page with its title', () => {
    for (const language of LANGUAGES) {
      for (const page of DOCS_PAGES) {
        expect(sourceOf(language, page.file)!.split('\n')[0], `${language}/${page.file}`).toMatch(/^# \S/);
      }
    }
  });

  it('links only to pages and headings that exist, in the same language', () => {
    const problems: string[] = [];
    for (const language of LANGUAGES) {
      for (const page of DOCS_PAGES) {
        const source = sourceOf(language, page.file)!;
        for (const href of linksOf(source)) {
          if (/^https?:\/\//.test(href) || href === '/api/openapi.json' || CONSOLE_PATHS.has(href)) continue;
          const [path = '', hash] = href.split('#');
          let targetSource = source;
          if (path !== '') {
            const target = path.startsWith('/docs/') ? findDocsPage(path.slice('/docs/'.length)) : null;
            if (!target) {
              problems.push(`${language}/${page.file}: ${href}`);
              continue;
            }
            targetSource = sourceOf(language, target.file)!;
          }
          if (hash !== undefined && !headingIdsOf(targetSource).includes(decodeURIComponent(hash))) {
            problems.push(`${language}/${page.file}: ${href} (no such heading)`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('shows signatures the edge computes', () => {
    const en = sourceOf('en', 'image/signed-url.md')!;
    const ja = sourceOf('ja', 'image/signed-url.md')!;
    const examples = [
      signPath('my-signing-secret', '/w=400,f=webp:auto/photos/cat.jpg'),
      signPath('my-signing-secret', '/photos/cat.jpg'),
      signPath('testsigningsecret', '/c/w=200/images/1.jpg'),
    ];
    for (const example of examples) {
      expect(en).toContain(example);
      expect(ja).toContain(example);
    }
    const expiring = signPath(
      'my-signing-secret',
      '/w=400,f=webp:auto,expires=2030-01-01T00:00:00Z/photos/cat.jpg',
    );
    expect(sourceOf('en', 'image/expire-limit.md')).toContain(expiring);
    expect(sourceOf('ja', 'image/expire-limit.md')).toContain(expiring);
  });

  it('gives example URLs the edge accepts', () => {
    const problems: string[] = [];
    for (const language of LANGUAGES) {
      for (const page of DOCS_PAGES) {
        const source = sourceOf(language, page.file)!;
        for (const match of source.matchAll(/https:\/\/a1b2c3d4e5f6\.img\.example\.com(\/[^\s"`'<]*)/g)) {
          const path = match[1]!;
          // Templates in code samples (`%s`, `{params}`) are not URLs yet.
          if (/%s|\{/.test(path)) continue;
          const parsed = parsePath(path);
          if (!parsed.ok) problems.push(`${language}/${page.file}: ${path}: ${parsed.reason}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
