import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The API server of `npm start` (PORT, default 8080): the dev server forwards the console's own
// calls and the public API to it, so `vite` serves only the SPA.
const apiServer = 'http://127.0.0.1:8080';

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    rolldownOptions: {
      treeshake: {
        // The contract is pure (schemas and tables, no I/O) but its package does not say so:
        // without this every zod schema would ride in the entry chunk beside the few constants
        // the shell uses. Forms load the schemas with their own lazy chunks.
        moduleSideEffects: [{ test: /\/packages\/contract\/src\//, sideEffects: false }],
      },
    },
  },
  server: {
    proxy: {
      '/.ui-api': apiServer,
      '/api': apiServer,
    },
  },
});
