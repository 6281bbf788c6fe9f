import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { buildOutput } from './build/build-output.ts';
import { catalogueShell } from './build/catalogue-shell.ts';

// The API server of `npm start` (PORT, default 8080): the dev server forwards the console's own
// calls and the public API to it, so `vite` serves only the SPA.
const apiServer = 'http://127.0.0.1:8080';

export default defineConfig({
  // catalogueShell: the entry's cut of the texts (lib/i18n.ts). buildOutput: precompressed
  // variants and the build stamp (`npm start` skips an unchanged build).
  plugins: [react(), catalogueShell(), buildOutput()],
  // `@/lib/...` instead of `../../../lib/...`; the same mapping is in tsconfig.json's `paths`.
  resolve: { alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // ECharts (about 520 KB before gzip) is a chunk of its own, loaded only with a chart.
    chunkSizeWarningLimit: 600,
  },
  server: {
    proxy: {
      '/.ui-api': apiServer,
      '/api': apiServer,
    },
  },
});
