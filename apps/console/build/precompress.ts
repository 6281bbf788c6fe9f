import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** What compresses; images and fonts are compressed formats already. */
const TEXT = new Set(['.html', '.js', '.mjs', '.css', '.svg', '.json', '.txt', '.md', '.map', '.xml']);
/**
 * Brotli quality 10, not the best (11): 11 takes twice the time (about 4 s of CPU for the
 * whole console, more than Vite's build) for 1.5 % fewer bytes.
 */
const BROTLI_QUALITY = 10;

async function filesUnder(directory: string): Promise<string[]> {
  const paths = (await readdir(directory, { recursive: true })).map((name) => join(directory, name));
  const isFile = await Promise.all(paths.map(async (path) => (await stat(path)).isFile()));
  return paths.filter((_, i) => isFile[i]);
}

/**
 * Writes `name.br` and `name.gz` beside every text file of the built console, once, at build
 * time, at (nearly) the highest settings; the server picks one per request by Accept-Encoding
 * (apps/server/src/http/static.ts). A variant no smaller than its file is not written.
 * Returns the bytes before and after brotli.
 */
export async function precompressDirectory(directory: string): Promise<{ bytes: number; brotli: number }> {
  const files = (await filesUnder(directory)).filter((path) => TEXT.has(extname(path)));
  const totals = { bytes: 0, brotli: 0 };
  // zlib's async calls run on libuv's pool: the files compress in parallel.
  await Promise.all(
    files.map(async (path) => {
      const body = await readFile(path);
      const [br, gz] = await Promise.all([
        brotli(body, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
            [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
          },
        }),
        gzipAsync(body, { level: constants.Z_BEST_COMPRESSION }),
      ]);
      totals.bytes += body.length;
      totals.brotli += Math.min(br.length, body.length);
      if (br.length < body.length) await writeFile(`${path}.br`, br);
      if (gz.length < body.length) await writeFile(`${path}.gz`, gz);
    }),
  );
  return totals;
}
