import { describe, expect, it } from 'vitest';
import { headingIdsOf, linksOf, renderDoc, sectionsOf, slugify } from './markdown.ts';

const SOURCE = `# Title

Intro with a [link](/docs/image/signed-url#worked-example).

## First part

Text.

### Detail here

\`\`\`js
const a = 1 < 2;
\`\`\`

## 署名の作り方

<script>alert(1)</script>
`;

describe('markdown of the documentation', () => {
  it('gives headings ids in every script', () => {
    expect(slugify('Worked example')).toBe('worked-example');
    expect(slugify('署名の作り方')).toBe('署名の作り方');
    expect(slugify('What’s new?')).toBe('whats-new');
    expect(headingIdsOf(SOURCE)).toEqual(['title', 'first-part', 'detail-here', '署名の作り方']);
  });

  it('extracts the title and a table of contents of h2 and h3', () => {
    const doc = renderDoc(SOURCE, { copyLabel: 'Copy' });
    expect(doc.title).toBe('Title');
    expect(doc.toc).toEqual([
      { level: 2, id: 'first-part', text: 'First part' },
      { level: 3, id: 'detail-here', text: 'Detail here' },
      { level: 2, id: '署名の作り方', text: '署名の作り方' },
    ]);
  });

  it('renders code blocks with a copy button and escapes what is not markdown', () => {
    const { html } = renderDoc(SOURCE, { copyLabel: 'コピー' });
    expect(html).toContain('data-docs-copy');
    expect(html).toContain('コピー');
    expect(html).toContain('const a = 1 &lt; 2;');
    expect(html).toContain('<h2 id="first-part"');
    expect(html).not.toContain('<script>');
  });

  it('lists links and cuts a page into searchable sections', () => {
    expect(linksOf(SOURCE)).toEqual(['/docs/image/signed-url#worked-example']);
    const sections = sectionsOf(SOURCE);
    expect(sections.map((section) => section.id)).toEqual(['', 'first-part', 'detail-here', '署名の作り方']);
    expect(sections[0]!.heading).toBe('Title');
    expect(sections[2]!.text).toContain('const a = 1 < 2;');
  });
});
