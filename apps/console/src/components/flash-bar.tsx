import { lazy, Suspense, type MouseEvent } from 'react';
import Alert from 'react-bootstrap/Alert';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { flash, useFlashMessages, type FlashMessage } from '@/lib/flash.ts';

// The sanitiser is only needed once a message shows: it stays out of the entry chunk.
const FlashHtml = lazy(() => import('./flash-html.tsx'));

function FlashText({ message }: { message: FlashMessage }) {
  const { t } = useTranslation();
  const text = message.key !== undefined ? t(message.key, message.params ?? {}) : (message.text ?? '');
  return <FlashHtml text={text} />;
}

/** The one-shot messages of the current page, under the navigation bar. */
export function FlashBar() {
  const messages = useFlashMessages();
  const navigate = useNavigate();
  const { t } = useTranslation();

  // Links inside a message stay in the app instead of reloading it.
  const followInternalLink = (event: MouseEvent<HTMLDivElement>) => {
    const anchor = (event.target as HTMLElement).closest('a');
    if (!anchor || anchor.origin !== window.location.origin || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    void navigate(anchor.pathname + anchor.search + anchor.hash);
  };

  if (messages.length === 0) return null;
  return (
    <Suspense fallback={null}>
      <div className="flash-bar" data-testid="flash-bar" onClick={followInternalLink}>
        {messages.map((message) => (
          <Alert
            key={message.id}
            variant={message.variant}
            dismissible
            closeLabel={t('common.close')}
            onClose={() => flash.dismiss(message.id)}
            className="mb-2"
            data-testid="flash-message"
            data-variant={message.variant}
          >
            <FlashText message={message} />
          </Alert>
        ))}
      </div>
    </Suspense>
  );
}
