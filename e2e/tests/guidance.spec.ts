import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { ALL_MEMBER_PERMISSIONS, OriginKind, OriginStatus, PLAN_FEATURES } from '@ukiyo/contract';
import sharp from 'sharp';
import { ADMIN } from '../support/fixtures.ts';
import { api, UI_API } from './edge.ts';
import { ARTIFACTS, login } from './helpers.ts';

/**
 * Guidance when something goes wrong (issue #17): a saved origin is checked and the outcome
 * said in the reader's language, Updating gives way to Applied without a reload, Enterprise is
 * a contact-sales action, the plan page compares limits, the certificate page explains the
 * plan, and live pages tell an administrator in an image organization where channels are.
 */
const SHOTS = `${ARTIFACTS}guidance/`;
mkdirSync(SHOTS, { recursive: true });
const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;
const LANGUAGES = ['ja', 'en'] as const;
type Language = (typeof LANGUAGES)[number];

let imageServer: Server;
let imageHost: string;

test.beforeAll(async () => {
  const photo = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#e76f51' } })
    .jpeg()
    .toBuffer();
  // Every path is the photo, but for those under /missing/.
  imageServer = createServer((req, res) => {
    if (req.url?.startsWith('/missing/')) res.writeHead(404, { 'content-type': 'text/plain' }).end('none');
    else res.writeHead(200, { 'content-type': 'image/jpeg' }).end(photo);
  });
  await new Promise<void>((resolve) => imageServer.listen(0, '127.0.0.1', resolve));
  imageHost = `127.0.0.1:${(imageServer.address() as AddressInfo).port}`;
});

test.afterAll(async () => {
  await new Promise<void>((resolve) => imageServer.close(() => resolve()));
});

async function useLanguage(page: Page, language: Language) {
  await page.addInitScript((value) => window.localStorage.setItem('ukiyo.language', value), language);
}

/** Full-page screenshots of the current page at both sizes. */
async function shoot(page: Page, name: string) {
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: `${SHOTS}${name}-${viewport.name}.png`, fullPage: true });
  }
  await page.setViewportSize(VIEWPORTS[0]);
}

async function call(page: Page, operation: string, data: unknown) {
  const response = await page.request.post(api(operation), { headers: UI_API, data });
  expect(response.status(), `${operation}: ${await response.text()}`).toBe(200);
  return response.json();
}

/**
 * A new organization on the Starter plan (no custom domains) and its owner, holding every
 * member permission, activated and logged in on a page of its own.
 */
async function starterOwner(browser: Browser, language: Language): Promise<Page> {
  const suffix = `${language}${Date.now().toString(36)}`;
  const email = `guidance-${suffix}@e2e.example.com`;
  const admin = await browser.newPage();
  await login(admin, ADMIN.email, ADMIN.password);
  await expect(admin).toHaveURL(/\/origin\/index$/);
  const registered = await call(admin, 'admin.register', {
    user: { emailAddress: email, fullName: 'Guidance Owner', permission: ALL_MEMBER_PERMISSIONS },
    organization: { name: `Guidance ${suffix}`, serviceCode: `guide-${suffix}`, plan: 1 },
    sakuraAccount: { sakuraMemberCode: `G${suffix}`.toUpperCase().slice(0, 32), name: `Guidance ${suffix}` },
    password: 'initial-password-1',
  });
  await admin.close();

  const page = await browser.newPage();
  await useLanguage(page, language);
  await call(page, 'auth.login', { emailAddress: email, password: 'initial-password-1' });
  await call(page, 'user.update_password', {
    userId: registered.user.userID,
    oldPassword: 'initial-password-1',
    newPassword: 'guidance-password-1',
  });
  // Choosing the password activated the account in this session.
  await page.goto('/');
  await expect(page).toHaveURL(/\/origin\/index$/);
  return page;
}

const CHECK_OK = { ja: 'オリジンに接続できました（HTTP 200）', en: 'The origin answered (HTTP 200).' };
const NOT_FOUND = {
  ja: 'オリジンにファイルがありません（HTTP 404）。パスとパスプレフィックスを確認してください',
  en: 'The origin has no file at this path (HTTP 404). Check the path and the path prefix.',
};
const UPDATING = { ja: '更新中', en: 'Updating' };
const APPLIED = { ja: '適用済み', en: 'Applied' };

for (const language of LANGUAGES) {
  test(`saving an origin checks it and shows Updating, then Applied (${language})`, async ({ browser }) => {
    const page = await starterOwner(browser, language);
    await page.getByTestId('origin-create').click();
    await page.getByTestId('origin-scheme').selectOption('http');
    await page.getByTestId('origin-host').fill(imageHost);

    // The edge in this process loads a new origin within milliseconds, so the list's first
    // answer after the save stands in for an edge that has not loaded it yet (status Updating,
    // as origin.add itself answers); the polls after it are the server's own answers.
    let heldBack = false;
    await page.route('**/.ui-api/origin.list?*', async (route) => {
      const response = await route.fetch();
      if (heldBack) return route.fulfill({ response });
      heldBack = true;
      const body = await response.json();
      for (const origin of body.origins) origin.status = OriginStatus.updating;
      return route.fulfill({ response, json: body });
    });
    const added = page.waitForResponse((response) => response.url().includes('/origin.add?'));
    await page.getByTestId('origin-submit').click();
    const saved = await (await added).json();
    expect(saved.origin.status).toBe(OriginStatus.updating);
    await expect(page).toHaveURL(/\/origin\/index$/);

    const row = page.locator(`[data-testid="origin-row"][data-origin-id="${saved.origin.originID}"]`);
    await expect(row.getByTestId('origin-status')).toHaveAttribute('data-status', 'updating');
    await expect(row.getByTestId('origin-status')).toHaveText(UPDATING[language]);
    const result = page.getByTestId('origin-check-result');
    await expect(result).toHaveAttribute('data-outcome', 'ok');
    await expect(page.getByTestId('origin-check-message')).toHaveText(CHECK_OK[language]);
    await expect(page.getByTestId('origin-check-type')).toHaveText('image/jpeg');
    await shoot(page, `origin-check-updating-${language}`);

    // The list polls while an origin is Updating: Applied arrives without a reload.
    await expect(row.getByTestId('origin-status')).toHaveAttribute('data-status', 'applied', {
      timeout: 10_000,
    });
    await expect(row.getByTestId('origin-status')).toHaveText(APPLIED[language]);
    await shoot(page, `origin-check-applied-${language}`);

    // A path the origin does not have, checked from the edit page: translated, with the status.
    await page.unroute('**/.ui-api/origin.list?*');
    await row.getByTestId('origin-update').click();
    await expect(page.getByTestId('origin-update-status')).toContainText(APPLIED[language]);
    await page.getByTestId('origin-check-path').fill('missing/file.jpg');
    await page.getByTestId('origin-check-submit').click();
    await expect(result).toHaveAttribute('data-outcome', 'notFound');
    await expect(page.getByTestId('origin-check-message')).toHaveText(NOT_FOUND[language]);
    await expect(result).toContainText('/missing/file.jpg');
    await shoot(page, `origin-check-not-found-${language}`);
    await page.close();
  });

  test(`plans compare limits; Enterprise opens the contact form about it (${language})`, async ({
    browser,
  }) => {
    const page = await starterOwner(browser, language);
    await page.goto('/plan/');
    const table = page.getByTestId('plan-limits');
    await expect(table).toBeVisible();
    for (const plan of [1, 2, 3, 4] as const) {
      const features = PLAN_FEATURES[plan];
      await expect(page.getByTestId(`plan-limit-${plan}-originLimit`)).toContainText(
        String(features.originLimit),
      );
      if (features.userLimit !== null)
        await expect(page.getByTestId(`plan-limit-${plan}-userLimit`)).toContainText(
          String(features.userLimit),
        );
    }
    // Never a "Change" button that the server refuses with 409.
    await expect(page.locator('[data-testid="plan-select"][data-plan="4"]')).toHaveCount(0);
    await shoot(page, `plan-limits-${language}`);

    await page.locator('[data-testid="plan-contact-sales"][data-plan="4"]').click();
    await expect(page).toHaveURL(/\/help\/\?subject=plan&plan=4#help-contact$/);
    await expect(page.getByTestId('help-category')).toHaveValue('plan');
    await expect(page.locator('#help-message')).toHaveValue(
      language === 'ja' ? /エンタープライズプランへの変更/ : /changing to the Enterprise plan/,
    );
    await shoot(page, `help-contact-sales-${language}`);
    await page.close();
  });

  test(`the certificate page explains a plan without custom domains (${language})`, async ({ browser }) => {
    const page = await starterOwner(browser, language);
    const added = await call(page, 'origin.add', {
      origin: {
        kind: OriginKind.http,
        config: { scheme: 'http', host: imageHost, pathPrefix: '', rewriteHost: '' },
      },
    });
    await page.goto(`/origin/${added.origin.originID}/cert`);
    const notice = page.getByTestId('origin-cert-plan');
    await expect(notice).toContainText(
      language === 'ja' ? 'プレミアム、エンタープライズ' : 'Premium and Enterprise',
    );
    await expect(page.getByTestId('origin-cert-form')).toHaveCount(0);
    await shoot(page, `cert-plan-${language}`);
    await page.getByTestId('origin-cert-plan-link').click();
    await expect(page).toHaveURL(/\/plan\/$/);
    await page.close();
  });

  test(`live pages tell an administrator in an image organization to switch (${language})`, async ({
    page,
  }) => {
    await useLanguage(page, language);
    await login(page, ADMIN.email, ADMIN.password);
    await expect(page).toHaveURL(/\/origin\/index$/);
    const session = await call(page, 'user.whoami', {});
    expect(session.organization.isLive).toBe(false);
    const liveCalls: string[] = [];
    page.on('request', (request) => {
      if (/\/\.ui-api\/channel\./.test(request.url())) liveCalls.push(request.url());
    });
    for (const [path, name] of [
      ['/channel/', 'channel'],
      ['/livestreaming/', 'livestreaming'],
    ] as const) {
      await page.goto(path);
      await expect(page.getByTestId('live-image-organization')).toContainText(session.organization.name);
      await expect(page.locator('form')).toHaveCount(0);
      await shoot(page, `live-${name}-${language}`);
    }
    expect(liveCalls).toEqual([]);
    await page.getByTestId('live-change-organization').click();
    await expect(page).toHaveURL(/\/auth\/changeOrganization$/);
  });
}
