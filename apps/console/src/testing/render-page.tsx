import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import type { ReactElement } from 'react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { vi } from 'vitest';
import type { User } from '@ukiyo/contract';
import { FlashBar } from '@/components/flash-bar.tsx';
import { setSession } from '@/lib/session.ts';
import '@/lib/i18n.ts';
import { ORGANIZATION } from './fixtures.ts';

/**
 * Answers ui-api calls by operation name (the path's last segment) and records them; an answer
 * that is a function gets the call's body.
 */
export function stubUiApi(answers: Record<string, unknown>) {
  const calls: { operation: string; body: unknown }[] = [];
  const fetchStub = vi.fn(async (url: string, init?: RequestInit) => {
    const operation = new URL(url, 'http://console.test').pathname.split('/').at(-1) ?? '';
    const body: unknown = JSON.parse(String(init?.body ?? '{}'));
    calls.push({ operation, body });
    const answer = answers[operation];
    if (answer === undefined) return Response.json({ error: 'unknown operation' }, { status: 404 });
    return Response.json(
      typeof answer === 'function' ? (answer as (input: unknown) => unknown)(body) : answer,
    );
  });
  vi.stubGlobal('fetch', fetchStub);
  return calls;
}

/** Renders a page as the router does (with the flash bar above it) for a session. */
export function renderPage(page: ReactElement, user: User | null, path = '/') {
  setSession({ user, organization: user ? ORGANIZATION : null });
  const router = createMemoryRouter(
    [
      {
        path: '*',
        element: (
          <>
            <FlashBar />
            {page}
          </>
        ),
      },
    ],
    { initialEntries: [path] },
  );
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
}
