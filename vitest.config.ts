import { defineConfig } from 'vitest/config';

// Node sizes its thread pool once, before any test code runs: the test processes inherit this,
// so an edge started in a test has the threads `npm start` gives it (transforms plus reserve).
process.env.UV_THREADPOOL_SIZE ??= '8';

// Projects: `unit` (pure, beside the code, fast), `console` (the SPA's components in jsdom) and
// `integration` (through the real HTTP app on a real database: embedded PGlite, or PostgreSQL
// when DATABASE_URL is set). None of them loads its modules afresh for each file (`isolate`):
// the tests keep no state between files (they pass shuffled), and loading was most of their
// time (unit 58 s to 30 s, console 42 s to 8 s).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          isolate: false,
          include: [
            'packages/*/src/**/*.test.ts',
            'apps/{server,edge,live}/src/**/*.test.ts',
            // The console's build steps run in Node, not in the browser.
            'apps/console/build/**/*.test.ts',
          ],
          environment: 'node',
        },
      },
      {
        extends: './apps/console/vite.config.ts',
        test: {
          name: 'console',
          isolate: false,
          include: ['apps/console/src/**/*.test.{ts,tsx}'],
          environment: 'jsdom',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['apps/*/test/**/*.int.test.ts'],
          environment: 'node',
          globalSetup: ['apps/server/test/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
          // One worker shares one database instance (PGlite boots in seconds); files run one
          // after another and each creates its own organizations, so they never collide.
          fileParallelism: false,
          isolate: false,
        },
      },
    ],
  },
});
