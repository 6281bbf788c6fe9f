import { readFile } from 'node:fs/promises';
import type { Plugin } from 'vite';

/**
 * The texts that can show before the first route renders, when only the entry has loaded: the
 * loading indicator (HydrateFallback) and the root error page. Everything else waits for the
 * whole catalogue, which the root loader fetches beside the page's own chunk (router.tsx).
 */
export const SHELL_PREFIXES = ['common.', 'rootError.'];

export function shellTexts(
  catalogue: Record<string, string>,
  prefixes: readonly string[] = SHELL_PREFIXES,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(catalogue).filter(([key]) => prefixes.some((prefix) => key.startsWith(prefix))),
  );
}

/**
 * `…/translation.json?shell`: the one catalogue file of a language cut, in the build, to the
 * shell's texts, so the entry chunk stays small as screens add texts. The dev server and the
 * tests get the whole file, as before.
 */
export function catalogueShell(): Plugin {
  let build = false;
  return {
    name: 'ukiyo-catalogue-shell',
    enforce: 'pre',
    configResolved(config) {
      build = config.command === 'build';
    },
    async load(id) {
      // Vite adds its own parameters in development (`?import&shell`).
      const [path, query = ''] = id.split('?');
      if (!query.split('&').includes('shell') || !path?.endsWith('.json')) return null;
      this.addWatchFile(path);
      const catalogue = JSON.parse(await readFile(path, 'utf8')) as Record<string, string>;
      return `export default ${JSON.stringify(build ? shellTexts(catalogue) : catalogue)};\n`;
    },
  };
}
