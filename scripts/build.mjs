// Compiles each process entry to one JavaScript file, dist/{name}.js, which production runs with
// plain `node` (no TypeScript loader): `node scripts/build.mjs [name ...]`, every entry by default.
// The workspace packages (@ukiyo/*, which export their TypeScript sources) are bundled in; npm
// dependencies stay external and load from node_modules as usual (sharp's and argon2's native
// addons, PGlite's WebAssembly cannot be bundled anyway).
import { readFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT_DIR = resolve(ROOT, 'dist');

const ENTRIES = {
  'all-in-one': 'apps/all-in-one/src/main.ts',
  server: 'apps/server/src/main-server.ts',
  edge: 'apps/edge/src/main.ts',
  live: 'apps/live/src/main.ts',
  // Worker threads: built whenever an entry that starts them is.
  'live-viewers': 'apps/live/src/viewers/viewer-process.entry.ts',
};
const ENTRY_OF_SOURCE = new Map(Object.entries(ENTRIES).map(([name, path]) => [resolve(ROOT, path), name]));

/** Bare imports other than our workspaces stay imports of node_modules. */
const dependenciesExternal = {
  name: 'dependencies-external',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@ukiyo/') ? undefined : { path: args.path, external: true },
    );
  },
};

// Files read at run time (the PGlite worker, the edge's sample images, the built console) are
// named relative to their source file with `new URL('…', import.meta.url)`. In a bundle that
// URL is relative to dist/ instead, so each is rewritten to reach the same file from there:
// they stay where the checkout (and the image) has them. A URL naming an entry's source (a
// worker thread's) names that entry's bundle instead, which is built too.
const RUNTIME_FILE = /new URL\((['"])(\.\.?\/[^'"]*)\1, import\.meta\.url\)/g;
const runtimeFiles = new Set();
const startedEntries = new Set();
const runtimeFilesFromDist = {
  name: 'runtime-files-from-dist',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const source = await readFile(args.path, 'utf8');
      const contents = source.replace(RUNTIME_FILE, (_, quote, path) => {
        const target = resolve(dirname(args.path), path);
        const entry = ENTRY_OF_SOURCE.get(target);
        if (entry) {
          startedEntries.add(entry);
          return `new URL(${quote}./${entry}.js${quote}, import.meta.url)`;
        }
        runtimeFiles.add(relative(ROOT, target) + (path.endsWith('/') ? '/' : ''));
        const fromDist = relative(OUT_DIR, target) + (path.endsWith('/') ? '/' : '');
        return `new URL(${quote}${fromDist}${quote}, import.meta.url)`;
      });
      return { contents, loader: 'ts' };
    });
  },
};

const names = process.argv.slice(2);
const unknown = names.filter((name) => !(name in ENTRIES));
if (unknown.length) {
  console.error(`build: unknown entry ${unknown.join(', ')} (entries: ${Object.keys(ENTRIES).join(', ')})`);
  process.exit(1);
}
const chosen = names.length ? names : Object.keys(ENTRIES);
const started = performance.now();
const bundle = (entries) =>
  build({
    entryPoints: Object.fromEntries(entries.map((name) => [name, resolve(ROOT, ENTRIES[name])])),
    outdir: OUT_DIR,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20.19',
    // Stack traces name the TypeScript sources under `node --enable-source-maps`.
    sourcemap: 'linked',
    // Logged error and class names stay as written, not renamed apart by the bundler.
    keepNames: true,
    logLevel: 'warning',
    plugins: [dependenciesExternal, runtimeFilesFromDist],
  });
await bundle(chosen);
const threads = [...startedEntries].filter((name) => !chosen.includes(name));
if (threads.length) await bundle(threads);
chosen.push(...threads);
console.log(
  `build: dist/{${chosen.join(',')}}.js in ${Math.round(performance.now() - started)} ms; ` +
    `read at run time from the checkout: ${[...runtimeFiles].sort().join(', ')}`,
);
