import type { DocsLanguage, DocsPage } from '@/features/docs/components/docs-tree.ts';

/**
 * Every page's markdown, loaded on demand: each file is its own small chunk, so neither the
 * entry bundle nor the docs page carries the texts of pages not read.
 */
const SOURCES = import.meta.glob<string>('../content/**/*.md', { query: '?raw', import: 'default' });

function loaderOf(language: DocsLanguage, file: string) {
  return SOURCES[`../content/${language}/${file}`];
}

/** The page in the language asked for, else in Japanese (the fallback language). */
export async function loadDocsSource(
  language: DocsLanguage,
  docsPage: DocsPage,
): Promise<{ source: string; language: DocsLanguage }> {
  const own = loaderOf(language, docsPage.file);
  if (own) return { source: await own(), language };
  const fallback = loaderOf('ja', docsPage.file);
  if (!fallback) throw new Error(`no documentation source for ${docsPage.file}`);
  return { source: await fallback(), language: 'ja' };
}
