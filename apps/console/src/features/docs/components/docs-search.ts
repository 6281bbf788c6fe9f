import MiniSearch from 'minisearch';
import type { DocsLanguage, DocsPage } from './docs-tree.ts';
import { sectionsOf } from './markdown.ts';

/**
 * Full-text search over the sections of every page of one language. Japanese has no spaces
 * between words, so runs of CJK characters are indexed as overlapping pairs (bigrams): a
 * query of two or more characters then finds any place it occurs.
 */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー]/u;

export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const chunk of text.toLowerCase().split(/[^\p{L}\p{N}_ー]+/u)) {
    if (!chunk) continue;
    // Split between CJK and other letters ("URL署名" is "url" and "署名").
    for (const run of chunk.match(
      /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー]+|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー]+/gu,
    ) ?? []) {
      if (!CJK.test(run)) {
        tokens.push(run);
        continue;
      }
      const chars = [...run];
      if (chars.length === 1) tokens.push(run);
      for (let i = 0; i + 1 < chars.length; i++) tokens.push(chars[i]! + chars[i + 1]!);
    }
  }
  return tokens;
}

export interface SearchDocument {
  id: string;
  slug: string;
  sectionId: string;
  pageTitle: string;
  heading: string;
  text: string;
}

export interface SearchHit {
  id: string;
  slug: string;
  sectionId: string;
  pageTitle: string;
  heading: string;
  snippet: string;
}

export function searchDocuments(
  language: DocsLanguage,
  pages: ReadonlyArray<{ page: DocsPage; source: string }>,
): SearchDocument[] {
  return pages.flatMap(({ page, source }) =>
    sectionsOf(source).map((section) => ({
      id: `${page.slug}#${section.id}`,
      slug: page.slug,
      sectionId: section.id,
      pageTitle: page.title[language],
      heading: section.id === '' ? '' : section.heading,
      text: section.text,
    })),
  );
}

export interface DocsIndex {
  search(query: string, limit?: number): SearchHit[];
}

function snippet(text: string, query: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const at = flat.toLowerCase().indexOf(query.trim().toLowerCase());
  const start = Math.max(0, at < 0 ? 0 : at - 40);
  const cut = flat.slice(start, start + 140);
  return `${start > 0 ? '…' : ''}${cut}${start + 140 < flat.length ? '…' : ''}`;
}

export function buildDocsIndex(documents: SearchDocument[]): DocsIndex {
  const index = new MiniSearch<SearchDocument>({
    fields: ['pageTitle', 'heading', 'text'],
    storeFields: ['slug', 'sectionId', 'pageTitle', 'heading', 'text'],
    tokenize,
    searchOptions: {
      boost: { pageTitle: 3, heading: 2 },
      combineWith: 'AND',
      prefix: (term) => !CJK.test(term),
      fuzzy: (term) => (CJK.test(term) || term.length < 5 ? false : 0.2),
    },
  });
  index.addAll(documents);
  return {
    search(query, limit = 20) {
      if (!query.trim()) return [];
      return index
        .search(query)
        .slice(0, limit)
        .map((result) => {
          const stored = result as unknown as SearchDocument & { id: string };
          return {
            id: stored.id,
            slug: stored.slug,
            sectionId: stored.sectionId,
            pageTitle: stored.pageTitle,
            heading: stored.heading,
            snippet: snippet(stored.text, query),
          };
        });
    },
  };
}
