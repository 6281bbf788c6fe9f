/**
 * The documentation tree (console-spec section 2): sections and pages with their titles in both
 * languages. The sidebar, the routing below /docs/ and the link check all read it; the page
 * bodies are markdown files under `content/{language}/{file}`.
 */
export type DocsLanguage = 'ja' | 'en';

export interface DocsPage {
  /** Path below /docs/ without slashes at either end; '' is the index. */
  slug: string;
  /** The markdown file below `content/{language}/`. */
  file: string;
  title: Record<DocsLanguage, string>;
  deprecated?: boolean;
}

export interface DocsSection {
  id: string;
  title: Record<DocsLanguage, string>;
  pages: DocsPage[];
}

const page = (slug: string, ja: string, en: string, options: { deprecated?: boolean } = {}): DocsPage => ({
  slug,
  file: slug === '' ? 'index.md' : slug.includes('/') ? `${slug}.md` : `${slug}/index.md`,
  title: { ja, en },
  ...options,
});

export const DOCS_TREE: DocsSection[] = [
  {
    id: 'overview',
    title: { ja: 'はじめに', en: 'Overview' },
    pages: [
      { ...page('', 'ドキュメント', 'Documentation'), file: 'index.md' },
      { ...page('design', 'サービスの構成', 'How the service is built'), file: 'design.md' },
    ],
  },
  {
    id: 'image',
    title: { ja: '画像変換', en: 'Image conversion' },
    pages: [
      page('image/getting-started', 'はじめての画像変換', 'Getting started'),
      page('image/origin-settings', 'オリジンの設定', 'Origin settings'),
      page('image/conversion-parameters', '変換パラメータ', 'Conversion parameters'),
      page('image/signed-url', '署名付きURL', 'Signed URLs'),
      page('image/expire-limit', '有効期限付きURL', 'Expiring URLs'),
      page('image/custom-domain', '独自ドメイン', 'Custom domains'),
      page('image/api-reference', 'APIリファレンス（旧）', 'API reference (old)', { deprecated: true }),
      page('image/cache-purge', 'キャッシュの削除', 'Purging the cache'),
      page('image/whats-new', '新機能', "What's new"),
    ],
  },
  {
    id: 'live',
    title: { ja: 'ライブ配信', en: 'Live streaming' },
    pages: [
      page('live/quickstart', 'クイックスタート', 'Quickstart'),
      page('live/api', 'ライブ配信API', 'Live API'),
      page('live/apierror', 'APIエラー', 'API errors'),
      page('live/archive', 'アーカイブ', 'Archive'),
      page('live/webhooks', 'Webhookの署名と再送', 'Webhook signatures and retries'),
      page('live/encryption', 'HLSの暗号化', 'HLS encryption'),
      page('live/whip', 'WHIPで配信・WHEPで視聴する', 'Publishing with WHIP, viewing with WHEP'),
      page('live/rtmp', 'RTMPで配信する', 'Publishing with RTMP'),
      page('live/srt', 'SRTで配信する', 'Publishing with SRT'),
      page('live/note', '注意事項', 'Notes and limits'),
      page('live/hlsjs', 'hls.jsで再生する', 'Playing with hls.js'),
      page('live/sora-2024-1', 'Sora互換とSora SDKでの配信', 'Sora compatibility and the Sora SDKs'),
      page('live/changes', 'APIの変更履歴', 'API changes'),
    ],
  },
  {
    id: 'wordpress',
    title: { ja: 'WordPress', en: 'WordPress' },
    pages: [page('wordpress', 'WordPressの画像を配信する', 'Serving WordPress images')],
  },
  {
    id: 'general',
    title: { ja: '共通', en: 'General' },
    pages: [
      page('general/platform-api', 'プラットフォームAPI・SDK・CLI', 'Platform API, SDK and CLI'),
      page('general/api-reference', 'APIリファレンス', 'API reference'),
      page('general/permissions', '権限とAPIトークン', 'Permissions and API tokens'),
      page('general/statistics', '統計・分析と料金', 'Statistics, analytics and charges'),
      page('general/audit', '監査ログ', 'Audit trail'),
    ],
  },
];

export const DOCS_PAGES: DocsPage[] = DOCS_TREE.flatMap((section) => section.pages);

/**
 * The page a path below /docs/ names: slashes and a trailing `index` do not matter, and a
 * section's own path ('image/') opens its first page. Null when there is no such page.
 */
export function findDocsPage(path: string): DocsPage | null {
  const slug = path
    .replace(/^\/+|\/+$/g, '')
    .replace(/(?:^|\/)index(?:\.md)?$/, '')
    .replace(/\.md$/, '');
  const exact = DOCS_PAGES.find((candidate) => candidate.slug === slug);
  if (exact) return exact;
  const section = DOCS_TREE.find((candidate) => candidate.id === slug);
  return section?.pages[0] ?? null;
}

/** The URL of a page (the route table's form: trailing slash for a directory page). */
export function docsPagePath(docsPage: DocsPage): string {
  if (docsPage.slug === '') return '/docs/';
  return docsPage.file.endsWith('/index.md') ? `/docs/${docsPage.slug}/` : `/docs/${docsPage.slug}`;
}

/** The pages before and after one, in reading order. */
export function neighbours(docsPage: DocsPage): { previous: DocsPage | null; next: DocsPage | null } {
  const index = DOCS_PAGES.indexOf(docsPage);
  return { previous: DOCS_PAGES[index - 1] ?? null, next: DOCS_PAGES[index + 1] ?? null };
}

export function docsLanguage(language: string): DocsLanguage {
  return language === 'en' ? 'en' : 'ja';
}
