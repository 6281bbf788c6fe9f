import DOMPurify from 'dompurify';
import MarkdownIt from 'markdown-it';
import anchor from 'markdown-it-anchor';

/**
 * Markdown of the documentation to HTML: heading ids for deep links (#hash), a table of
 * contents from the headings, code blocks with a copy button, and the output sanitised.
 * The sources are ours, but the output goes through DOMPurify all the same.
 */

/** Heading ids keep letters of every script: Japanese headings get readable anchors too. */
export function slugify(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/\s+/g, '-')
    .replace(/[^\p{L}\p{N}_-]/gu, '')
    .replace(/-+/g, '-');
}

export interface TocEntry {
  level: 2 | 3;
  id: string;
  text: string;
}

export interface RenderedDoc {
  title: string;
  html: string;
  toc: TocEntry[];
}

interface RenderOptions {
  copyLabel?: string;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function createMarkdown() {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
  md.use(anchor, { level: [1, 2, 3], slugify, tabIndex: false });
  md.renderer.rules.fence = (tokens, index, _options, env) => {
    const token = tokens[index]!;
    const language = token.info.trim().split(/\s+/)[0] ?? '';
    const copyLabel: unknown = env?.copyLabel;
    const label = escapeHtml(typeof copyLabel === 'string' ? copyLabel : 'Copy');
    const languageClass = language ? ` class="language-${escapeHtml(language)}"` : '';
    return (
      `<div class="docs-code">` +
      `<button type="button" class="btn btn-sm btn-outline-secondary docs-copy" data-docs-copy="">${label}</button>` +
      `<pre><code${languageClass}>${escapeHtml(token.content)}</code></pre></div>\n`
    );
  };
  md.renderer.rules.table_open = () =>
    '<div class="table-responsive"><table class="table table-sm table-bordered">\n';
  md.renderer.rules.table_close = () => '</table></div>\n';
  return md;
}

let shared: ReturnType<typeof createMarkdown> | undefined;
type Token = ReturnType<ReturnType<typeof createMarkdown>['parse']>[number];
const markdown = () => (shared ??= createMarkdown());

function inlineText(token: Token | undefined): string {
  return (token?.children ?? [])
    .filter((child) => child.type === 'text' || child.type === 'code_inline')
    .map((child) => child.content)
    .join('');
}

/** h2 and h3 of parsed markdown, with the ids the anchor plugin gave them. */
export function tocOf(tokens: Token[]): TocEntry[] {
  const toc: TocEntry[] = [];
  tokens.forEach((token, index) => {
    if (token.type !== 'heading_open' || (token.tag !== 'h2' && token.tag !== 'h3')) return;
    const id = token.attrGet('id');
    if (typeof id === 'number') return;
    if (id) toc.push({ level: token.tag === 'h2' ? 2 : 3, id, text: inlineText(tokens[index + 1]) });
  });
  return toc;
}

function titleOf(tokens: Token[]): string {
  const index = tokens.findIndex((token) => token.type === 'heading_open' && token.tag === 'h1');
  return index < 0 ? '' : inlineText(tokens[index + 1]);
}

export function renderDoc(source: string, options: RenderOptions = {}): RenderedDoc {
  const md = markdown();
  const env: Parameters<typeof md.parse>[1] = { copyLabel: options.copyLabel };
  const tokens = md.parse(source, env);
  const html = md.renderer.render(tokens, md.options, env);
  return {
    title: titleOf(tokens),
    toc: tocOf(tokens),
    html: DOMPurify.sanitize(html, { ADD_ATTR: ['target'] }),
  };
}

export interface DocSection {
  /** The heading id, '' for the text before the first h2. */
  id: string;
  heading: string;
  text: string;
}

/** A page cut at its h2/h3 headings, as plain text: the units the search finds. */
export function sectionsOf(source: string): DocSection[] {
  const tokens = markdown().parse(source, {});
  const sections: DocSection[] = [{ id: '', heading: titleOf(tokens), text: '' }];
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!;
    if (token.type === 'heading_open' && (token.tag === 'h2' || token.tag === 'h3')) {
      sections.push({
        id: String(token.attrGet('id') ?? ''),
        heading: inlineText(tokens[index + 1]),
        text: '',
      });
      index += 2;
      continue;
    }
    if (token.type === 'heading_open') {
      index += 2;
      continue;
    }
    const content = token.type === 'inline' ? inlineText(token) : token.type === 'fence' ? token.content : '';
    if (content) sections.at(-1)!.text += `${content}\n`;
  }
  return sections.filter((section) => section.id === '' || section.heading);
}

/** Links of a page: every `href` of its markdown, for the link check. */
export function linksOf(source: string): string[] {
  const links: string[] = [];
  const visit = (tokens: Token[]) => {
    for (const token of tokens) {
      if (token.type === 'link_open') links.push(String(token.attrGet('href') ?? ''));
      if (token.children) visit(token.children);
    }
  };
  visit(markdown().parse(source, {}));
  return links;
}

/** Heading ids of a page, for checking the #hash of links. */
export function headingIdsOf(source: string): string[] {
  return markdown()
    .parse(source, {})
    .filter((token: Token) => token.type === 'heading_open')
    .map((token: Token) => String(token.attrGet('id') ?? ''));
}
