import { useQuery } from '@tanstack/react-query';
import { useMemo, useState, type MouseEvent } from 'react';
import Alert from 'react-bootstrap/Alert';
import Badge from 'react-bootstrap/Badge';
import Button from 'react-bootstrap/Button';
import Form from 'react-bootstrap/Form';
import ListGroup from 'react-bootstrap/ListGroup';
import { useTranslation } from 'react-i18next';
import { Link, NavLink, useNavigate, useParams } from 'react-router';
import { writeClipboard } from '@/components/copy-button.tsx';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { flash } from '@/lib/flash.ts';
import { loadDocsSource } from '@/features/docs/api/docs-content.ts';
import { buildDocsIndex, searchDocuments, type DocsIndex } from './docs-search.ts';
import {
  DOCS_PAGES,
  DOCS_TREE,
  docsLanguage,
  docsPagePath,
  findDocsPage,
  neighbours,
  type DocsLanguage,
  type DocsPage as DocsPageEntry,
} from './docs-tree.ts';
import { renderDoc, type TocEntry } from './markdown.ts';
import './docs.css';

async function loadIndex(language: DocsLanguage): Promise<DocsIndex> {
  const pages = await Promise.all(
    DOCS_PAGES.map(async (page) => ({ page, source: (await loadDocsSource(language, page)).source })),
  );
  return buildDocsIndex(searchDocuments(language, pages));
}

function DocsSearch({ language }: { language: DocsLanguage }) {
  const { t } = useTranslation();
  const [query, setQuery] = useState('');
  const [wanted, setWanted] = useState(false);
  const index = useQuery({
    queryKey: ['docs-index', language],
    queryFn: () => loadIndex(language),
    enabled: wanted,
    staleTime: Infinity,
  });
  const hits = useMemo(() => index.data?.search(query) ?? [], [index.data, query]);
  return (
    <div className="mb-3" role="search">
      <Form.Control
        type="search"
        placeholder={t('docs.searchPlaceholder')}
        aria-label={t('docs.search')}
        value={query}
        onFocus={() => setWanted(true)}
        onChange={(event) => {
          setWanted(true);
          setQuery(event.target.value);
        }}
        data-testid="docs-search"
      />
      {query.trim() !== '' && (
        <div className="docs-search-results mt-2" data-testid="docs-search-results">
          {index.isPending ? (
            <LoadingBlock />
          ) : hits.length === 0 ? (
            <p className="small text-body-secondary mb-0" data-testid="docs-search-empty">
              {t('docs.searchEmpty')}
            </p>
          ) : (
            <ListGroup variant="flush">
              {hits.map((hit) => {
                const page = findDocsPage(hit.slug);
                if (!page) return null;
                const to = `${docsPagePath(page)}${hit.sectionId ? `#${hit.sectionId}` : ''}`;
                return (
                  <ListGroup.Item
                    key={hit.id}
                    action
                    as={Link}
                    to={to}
                    onClick={() => setQuery('')}
                    className="px-2 py-2"
                    data-testid="docs-search-result"
                  >
                    <div className="small fw-semibold">
                      {hit.pageTitle}
                      {hit.heading && <span className="text-body-secondary"> › {hit.heading}</span>}
                    </div>
                    <div className="small text-body-secondary docs-snippet">{hit.snippet}</div>
                  </ListGroup.Item>
                );
              })}
            </ListGroup>
          )}
        </div>
      )}
    </div>
  );
}

function DocsSidebar({ language, onNavigate }: { language: DocsLanguage; onNavigate: () => void }) {
  return (
    <nav className="docs-sidebar small" id="docs-sidebar" data-testid="docs-sidebar">
      {DOCS_TREE.map((section) => (
        <div key={section.id} className="mb-3">
          <div className="docs-sidebar-section text-uppercase text-body-secondary fw-semibold mb-1">
            {section.title[language]}
          </div>
          <ul className="list-unstyled mb-0">
            {section.pages.map((page) => (
              <li key={page.slug}>
                <NavLink
                  to={docsPagePath(page)}
                  end
                  className={({ isActive }) => `docs-sidebar-link${isActive ? ' active' : ''}`}
                  onClick={onNavigate}
                  data-testid="docs-nav-link"
                  data-slug={page.slug}
                >
                  {page.title[language]}
                </NavLink>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </nav>
  );
}

function DocsToc({ toc }: { toc: TocEntry[] }) {
  const { t } = useTranslation();
  if (toc.length === 0) return null;
  return (
    <nav className="docs-toc small" aria-label={t('docs.toc')} data-testid="docs-toc">
      <div className="fw-semibold mb-2">{t('docs.toc')}</div>
      <ul className="list-unstyled mb-0">
        {toc.map((entry) => (
          <li key={entry.id} className={entry.level === 3 ? 'ps-3' : ''}>
            <Link to={`#${entry.id}`} className="docs-toc-link" data-testid="docs-toc-link">
              {entry.text}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function PageNeighbours({ page, language }: { page: DocsPageEntry; language: DocsLanguage }) {
  const { t } = useTranslation();
  const { previous, next } = neighbours(page);
  return (
    <div className="d-flex justify-content-between gap-3 border-top pt-3 mt-5 small">
      <div>
        {previous && (
          <Link to={docsPagePath(previous)} data-testid="docs-previous">
            ← {t('docs.previous')}: {previous.title[language]}
          </Link>
        )}
      </div>
      <div className="text-end">
        {next && (
          <Link to={docsPagePath(next)} data-testid="docs-next">
            {t('docs.next')}: {next.title[language]} →
          </Link>
        )}
      </div>
    </div>
  );
}

function DocsArticle({ page, language }: { page: DocsPageEntry; language: DocsLanguage }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const source = useQuery({
    queryKey: ['docs-source', language, page.file],
    queryFn: () => loadDocsSource(language, page),
    staleTime: Infinity,
  });
  const copyLabel = t('common.copy');
  const rendered = useMemo(
    () => (source.data ? renderDoc(source.data.source, { copyLabel }) : null),
    [source.data, copyLabel],
  );

  // One listener for the rendered HTML: copy buttons, and links inside the console stay in
  // the single-page app (so #hash targets scroll through the app's scroll manager).
  const onClick = (event: MouseEvent<HTMLDivElement>) => {
    const target = event.target as HTMLElement;
    const copy = target.closest<HTMLButtonElement>('[data-docs-copy]');
    if (copy) {
      const code = copy.parentElement?.querySelector('code')?.textContent ?? '';
      writeClipboard(code).then(
        () => flash.now({ variant: 'success', key: 'common.copied', action: 'copy' }),
        () => flash.now({ variant: 'warning', key: 'common.copyFailed', action: 'copy' }),
      );
      return;
    }
    const link = target.closest<HTMLAnchorElement>('a[href]');
    const href = link?.getAttribute('href') ?? '';
    if (!link || event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    if (href.startsWith('#') || (href.startsWith('/docs/') && !href.startsWith('//'))) {
      event.preventDefault();
      void navigate(href);
    }
  };

  if (source.isError) {
    return (
      <Alert variant="danger" data-testid="docs-load-error">
        {t('docs.loadFailed')}
      </Alert>
    );
  }
  if (!rendered || !source.data) return <LoadingBlock />;
  return (
    <div className="row g-4">
      <article className="col-xl-9 docs-article" lang={source.data.language} data-testid="docs-article">
        {page.deprecated && (
          <Alert variant="warning" data-testid="docs-deprecated">
            {t('docs.deprecated')}
          </Alert>
        )}
        {source.data.language !== language && (
          <Alert variant="info" className="small">
            {t('docs.fallback')}
          </Alert>
        )}
        {/* Sanitised by DOMPurify in renderDoc. */}
        <div
          className="docs-content"
          onClick={onClick}
          dangerouslySetInnerHTML={{ __html: rendered.html }}
          data-testid="docs-content"
        />
        <PageNeighbours page={page} language={language} />
      </article>
      <aside className="col-xl-3 d-none d-xl-block">
        <div className="docs-sticky">
          <DocsToc toc={rendered.toc} />
        </div>
      </aside>
    </div>
  );
}

export function DocsPage() {
  const { t, i18n } = useTranslation();
  const language = docsLanguage(i18n.language);
  const page = findDocsPage(useParams()['*'] ?? '');
  // Below the lg breakpoint the thirty-odd links would push the article off a phone's screen:
  // they fold behind a button naming the page shown; from lg up they are always listed.
  const [menuOpen, setMenuOpen] = useState(false);
  return (
    <div className="docs-layout row g-4" data-testid="docs-page" data-slug={page?.slug ?? ''}>
      <div className="col-lg-3 col-xxl-2">
        <div className="docs-sticky">
          <DocsSearch language={language} />
          <Button
            variant="outline-secondary"
            className="d-lg-none w-100 text-start"
            aria-expanded={menuOpen}
            aria-controls="docs-sidebar"
            onClick={() => setMenuOpen((open) => !open)}
            data-testid="docs-menu-toggle"
          >
            <span className="d-block small text-body-secondary">{t('docs.menu')}</span>
            {page?.title[language] ?? t('docs.notFound')}
          </Button>
          <div className={menuOpen ? 'mt-3 mt-lg-0' : 'd-none d-lg-block'}>
            <DocsSidebar language={language} onNavigate={() => setMenuOpen(false)} />
          </div>
        </div>
      </div>
      <div className="col-lg-9 col-xxl-10">
        {page ? (
          <>
            {page.deprecated && (
              <Badge bg="warning" text="dark" className="mb-2">
                {t('docs.deprecatedBadge')}
              </Badge>
            )}
            <DocsArticle key={`${language}:${page.slug}`} page={page} language={language} />
          </>
        ) : (
          <Alert variant="warning" data-testid="docs-not-found">
            {t('docs.notFound')} <Link to="/docs/">{t('docs.backToIndex')}</Link>
          </Alert>
        )}
      </div>
    </div>
  );
}
