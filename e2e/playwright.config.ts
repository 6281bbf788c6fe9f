import { defineConfig, devices } from '@playwright/test';

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
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        // Real host candidates, not mDNS names: the WHIP server (werift) cannot resolve .local.
        '--disable-features=WebRtcHideLocalIpsWithMdns',
      ],
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
