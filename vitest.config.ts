import { configDefaults, defineConfig } from 'vitest/config';
import type { Reporter } from 'vitest/node';

// Node sizes its thread pool once, before any test code runs: the test processes inherit this,
// so an edge started in a test has the threads `npm start` gives it (transforms plus reserve).
process.env.UV_THREADPOOL_SIZE ??= '8';

// Integration files that time CPU-bound work and fail when another file shares the cores (SRT's
// first segment within 2 s of its first media read 2.16 s in CI beside another live file).
const MACHINE_TIMED = [
  'apps/edge/test/overload.int.test.ts',
  'apps/live/test/live-shedding.int.test.ts',
  'apps/live/test/live-srt.int.test.ts',
];

const integration = {
  include: ['apps/*/test/**/*.int.test.ts'],
  environment: 'node',
  globalSetup: ['apps/server/test/global-setup.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
  isolate: false,
  // CI runs about 350 of these on two cores beside each other's ffmpeg, Chromium and aiortc
  // peers, and many read wall-clock windows. CI's last two refusals (stops 50 and 51) were three
  // such tests failing once, each of which passed alone and in later runs. So in CI a test that
  // fails is tried once more, and a pass on the second try is printed with the first try's error
  // (`retried` below), to be seen and mended, not hidden. Locally a test runs once.
  retry: process.env.CI ? 1 : 0,
};

/** Prints each test that passed only when tried again, with what failed the first time. */
const retried: Reporter = {
  onTestCaseResult(test) {
    const { state, errors } = test.result();
    if (state !== 'passed' || !errors?.length) return;
    const first = errors[0]!;
    console.log(`retried: ${test.module.relativeModuleId} > ${test.fullName}\n  first try: ${first.message}`);
  },
};

// Projects: `unit` (pure, beside the code, fast), `console` (the SPA's components in jsdom),
// `integration` and `integration-alone` (through the real HTTP app on a real database: embedded
// PGlite, or PostgreSQL when DATABASE_URL is set). None of them loads its modules afresh for
// each file (`isolate`): the tests keep no state between files (they pass shuffled), and loading
// was most of their time (unit 58 s to 30 s, console 42 s to 8 s).
export default defineConfig({
  test: {
    reporters: ['default', retried],
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
          ...integration,
          name: 'integration',
          exclude: [...configDefaults.exclude, ...MACHINE_TIMED],
          // Two workers, each with its own server and database (PGlite, or a PostgreSQL database
          // of its own: global-setup.ts); a worker's files run one after another and each creates
          // its own organizations, so they never collide. Most files wait on ffmpeg, sockets and
          // timers: two workers halve the suite's time on two cores.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          ...integration,
          name: 'integration-alone',
          include: MACHINE_TIMED,
          // These time conversions against deadlines: they run after the others, with the
          // machine to themselves.
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
