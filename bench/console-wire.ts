// The bytes a first visit to the login page costs: Debian's Chromium loads /auth/login with an
// empty cache from a running server (it starts none: `npm start`, then
// `npm run bench -- console-wire [url]`) and sums what came over the wire (encodedDataLength:
// headers and bodies as sent, compressed or not) until the login form shows. Chromium asks for
// `gzip, deflate, br, zstd`, on plain HTTP to loopback too.
import { chromium, type CDPSession } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../e2e/support/chromium.ts';
import { report } from './lib.ts';

const url = new URL('/auth/login', process.argv[2] ?? process.env.CONSOLE_URL ?? 'http://127.0.0.1:8080');

const browser = await chromium.launch({
  executablePath: CHROMIUM_PATH,
  args: CHROMIUM_ARGS,
});
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp: CDPSession = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const types = new Map<string, string>();
  const bytes = new Map<string, number>();
  cdp.on('Network.responseReceived', (event) => types.set(event.requestId, event.type));
  cdp.on('Network.loadingFinished', (event) => bytes.set(event.requestId, event.encodedDataLength));
  await page.goto(url.href, { waitUntil: 'networkidle' });
  await page.locator('input[type="password"]').waitFor();

  const sum = (type?: string) =>
    [...bytes].reduce((total, [id, n]) => total + (type === undefined || types.get(id) === type ? n : 0), 0);
  const kb = (n: number) => Math.round(n / 102.4) / 10;
  report(
    'console-wire',
    {
      loginPageWireKB: kb(sum()),
      scriptKB: kb(sum('Script')),
      stylesheetKB: kb(sum('Stylesheet')),
      requests: bytes.size,
    },
    { loginPageWireKB: '< 300' },
  );
} finally {
  await browser.close();
}
