import { defineConfig, devices } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './support/chromium.ts';

const PORT = Number(process.env.E2E_PORT ?? 18_480);
export const BASE_URL = `http://127.0.0.1:${PORT}`;

/**
 * Browser tests through Debian's Chromium (never a downloaded browser) against the real
 * server on a fresh embedded database seeded by support/start-server.ts.
 */
export default defineConfig({
  testDir: './tests',
  outputDir: './test-results',
  fullyParallel: false,
  workers: 1,
  retries: process.env.CI ? 1 : 0,
  timeout: 30_000,
  reporter: [['list']],
  use: {
    baseURL: BASE_URL,
    locale: 'ja-JP',
    timezoneId: 'Asia/Tokyo',
    // Recording a trace costs each test about a third more CPU; CI's retry of a failed test
    // records one (`--trace on` does locally).
    trace: 'on-first-retry',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: CHROMIUM_PATH,
      args: CHROMIUM_ARGS,
    },
  },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'], channel: undefined } }],
  webServer: {
    command: `node --import tsx support/start-server.ts`,
    url: `${BASE_URL}/index.html`,
    env: { PORT: String(PORT) },
    timeout: 120_000,
    reuseExistingServer: false,
    stdout: 'pipe',
  },
});
