/**
 * Detects a new deployment (console-spec section 4): the first HEAD /index.html records the
 * ETag; later ones send it as If-Match and the server answers 412 once index.html changed.
 * A failed check is not a change: navigation must not depend on it.
 */
export function createVersionCheck(fetchImpl: typeof fetch = (...args) => fetch(...args)) {
  let firstSeen: string | null = null;

  return async function deployedVersionChanged(): Promise<boolean> {
    try {
      const headers: Record<string, string> = firstSeen === null ? {} : { 'If-Match': firstSeen };
      const response = await fetchImpl('/index.html', { method: 'HEAD', cache: 'no-store', headers });
      if (firstSeen === null) {
        firstSeen = response.ok ? response.headers.get('ETag') : null;
        return false;
      }
      return response.status === 412;
    } catch {
      return false;
    }
  };
}

export const deployedVersionChanged = createVersionCheck();
