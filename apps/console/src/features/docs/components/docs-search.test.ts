import { describe, expect, it } from 'vitest';
import { buildDocsIndex, searchDocuments, tokenize } from './docs-search.ts';
import { findDocsPage } from './docs-tree.ts';

describe('docs search', () => {
  it('tokenizes Japanese into bigrams and Latin into words', () => {
    expect(tokenize('署名付きURL')).toEqual(['署名', '名付', '付き', 'url']);
    expect(tokenize('Signed URLs, expiry')).toEqual(['signed', 'urls', 'expiry']);
    expect(tokenize('鍵')).toEqual(['鍵']);
  });

  const pages = [
    {
      page: findDocsPage('image/signed-url')!,
      source: '# x\n\n## 署名の作り方\n\nHMAC-SHA256 で署名します。\n',
    },
    { page: findDocsPage('live/whip')!, source: '# y\n\n## OBS Studio\n\nWHIP で配信します。\n' },
  ];

  it('finds sections of pages in Japanese', () => {
    const index = buildDocsIndex(searchDocuments('ja', pages));
    const hits = index.search('署名');
    expect(hits[0]).toMatchObject({
      slug: 'image/signed-url',
      sectionId: '署名の作り方',
      pageTitle: '署名付きURL',
    });
    expect(index.search('配信')[0]?.slug).toBe('live/whip');
    expect(index.search('存在しない言葉')).toEqual([]);
    expect(index.search('  ')).toEqual([]);
  });

  it('finds words by prefix in English', () => {
    const index = buildDocsIndex(
      searchDocuments('en', [
        { page: findDocsPage('live/whip')!, source: '# y\n\n## OBS Studio\n\nPublish with WHIP.\n' },
      ]),
    );
    const [hit] = index.search('publ');
    expect(hit).toMatchObject({ slug: 'live/whip', sectionId: 'obs-studio', heading: 'OBS Studio' });
    expect(hit?.snippet).toContain('Publish with WHIP.');
  });
});
