import { useEffect, useState } from 'react';
import { callApi } from '@/lib/api-client.ts';

/**
 * The external status page (STATUS_URL) for the navbar, asked once per page load. Kept apart
 * from status-api.ts: the navbar is in the entry bundle, which should not carry the query hooks.
 */
let asked: Promise<string | null> | undefined;

function externalStatusUrl(): Promise<string | null> {
  asked ??= callApi('status.list', {}).then(
    (answer) => answer.externalUrl,
    () => {
      // Unknown for now: the in-console page is the safe default; ask again next time.
      asked = undefined;
      return null;
    },
  );
  return asked;
}

export function useExternalStatusUrl(): string | null {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void externalStatusUrl().then((value) => {
      if (live) setUrl(value);
    });
    return () => {
      live = false;
    };
  }, []);
  return url;
}
