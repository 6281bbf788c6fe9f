import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Plugin, ResolvedConfig } from 'vite';
import { precompressDirectory } from './precompress.ts';
import { consoleStamp, STAMP_FILE } from './stamp.ts';

/**
 * After `vite build` has written everything: brotli and gzip variants beside each text file,
 * then the build stamp, last, so an interrupted build leaves none and `npm start` builds again.
 * The stamp is of the sources as the build began: an edit during the build makes it stale.
 */
export function buildOutput(): Plugin {
  let config: ResolvedConfig;
  let stamp = '';
  return {
    name: 'ukiyo-build-output',
    apply: 'build',
    configResolved(resolved) {
      config = resolved;
    },
    buildStart() {
      // The repository's root from Vite's own (apps/console): in a bundled config,
      // import.meta.url need not be this file's.
      stamp = consoleStamp(resolve(config.root, '../..'));
    },
    writeBundle: {
      order: 'post',
      sequential: true,
      async handler() {
        const outDir = resolve(config.root, config.build.outDir);
        const { bytes, brotli } = await precompressDirectory(outDir);
        config.logger.info(
          `precompressed ${(bytes / 1024).toFixed(0)} KB of text to ${(brotli / 1024).toFixed(0)} KB (brotli; gzip beside it)`,
        );
        await writeFile(join(outDir, STAMP_FILE), `${stamp}\n`);
      },
    },
  };
}
