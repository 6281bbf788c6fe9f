import 'bootstrap/dist/css/bootstrap.min.css';
import './styles.css';
import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { I18nextProvider } from 'react-i18next';
import { RouterProvider } from 'react-router/dom';
import { createConsoleRouter } from './app/router.tsx';
import { i18n, languageReady } from './lib/i18n.ts';
import { queryClient } from './lib/query-client.ts';

const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root element');

await languageReady;

createRoot(container).render(
  <StrictMode>
    <I18nextProvider i18n={i18n}>
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={createConsoleRouter()} />
      </QueryClientProvider>
    </I18nextProvider>
  </StrictMode>,
);
