import { useEffect } from 'react';
import Container from 'react-bootstrap/Container';
import Spinner from 'react-bootstrap/Spinner';
import { useTranslation } from 'react-i18next';
import { Outlet, useNavigation } from 'react-router';
import { PRODUCT_NAME } from '@ukiyo/contract';
import { AppFooter } from '@/components/app-footer.tsx';
import { FlashBar } from '@/components/flash-bar.tsx';
import { useSessionLossRedirect } from '@/lib/api-errors.ts';
import { useRouteTitle } from './route-title.ts';
import { useScrollOnNavigation } from './scroll.ts';
import { TopNavbar } from './top-navbar.tsx';

function usePageTitle(): void {
  const title = useRouteTitle();
  useEffect(() => {
    document.title = `${title} | ${PRODUCT_NAME}`;
  }, [title]);
}

/** A thin bar while the next page's session check and code load. */
function NavigationProgress() {
  const { t } = useTranslation();
  const { state } = useNavigation();
  if (state === 'idle') return null;
  return <div className="navigation-progress" role="progressbar" aria-label={t('common.loading')} />;
}

export function RootLayout() {
  usePageTitle();
  useScrollOnNavigation();
  useSessionLossRedirect();
  return (
    <div className="app-shell d-flex flex-column min-vh-100">
      <NavigationProgress />
      <TopNavbar />
      <main className="flex-grow-1 py-4" id="main">
        <Container fluid className="px-4">
          <FlashBar />
          <Outlet />
        </Container>
      </main>
      <AppFooter />
    </div>
  );
}

/** Shown before the first session check answers. */
export function LoadingScreen() {
  const { t } = useTranslation();
  return (
    <div className="d-flex min-vh-100 align-items-center justify-content-center">
      <Spinner animation="border" variant="secondary" role="status">
        <span className="visually-hidden">{t('common.loading')}</span>
      </Spinner>
    </div>
  );
}
