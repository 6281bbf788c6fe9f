import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import sharp from 'sharp';
import { ADMIN } from '../support/fixtures.ts';
import { login, screenshot } from './helpers.ts';

let imageServer: Server;
let imagePort: number;
const CUSTOM_DOMAIN = 'img.e2e-origins.example';

/** The language the console starts in (it remembers the choice in localStorage). */
async function useLanguage(page: Page, language: 'ja' | 'en') {
  await page.addInitScript((value) => window.localStorage.setItem('ukiyo.language', value), language);
}

/** A self-signed certificate for the custom domain, valid for 20 days (so it "expires within a month"). */
function selfSignedCertificate(host: string): { certificate: string; privateKey: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ukiyo-e2e-cert-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-subj',
      `/CN=${host}`,
      '-addext',
      `subjectAltName=DNS:${host}`,
      '-days',
      '20',
      '-keyout',
      'key.pem',
      '-out',
      'cert.pem',
    ],
    { cwd: dir, stdio: 'pipe' },
  );
  return {
    certificate: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    privateKey: readFileSync(join(dir, 'key.pem'), 'utf8'),
  };
}

/** Logged in as the administrator, on the page login leads to. */
async function signIn(page: Page) {
  await login(page, ADMIN.email, ADMIN.password);
  await expect(page).toHaveURL(/\/origin\/index$/);
}

test.beforeAll(async () => {
  const photo = await sharp({ create: { width: 800, height: 600, channels: 3, background: '#2a9d8f' } })
    .jpeg({ quality: 95 })
    .toBuffer();
  imageServer = createServer((req, res) => {
    if (req.url === '/photo.jpg') res.writeHead(200, { 'content-type': 'image/jpeg' }).end(photo);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => imageServer.listen(0, '127.0.0.1', resolve));
  imagePort = (imageServer.address() as AddressInfo).port;
});

test.afterAll(async () => {
  await new Promise((resolve) => imageServer.close(resolve));
});

test.describe.serial('origins, preview and cache', () => {
  let originID = '';
  let originName = '';

  test('an HTTP origin is created from the form, checked field by field, and applied', async ({ page }) => {
    test.setTimeout(60_000);
    await signIn(page);
    await page.getByTestId('origin-create').click();
    await expect(page).toHaveURL(/\/origin\/create$/);

    // Nothing filled in, a custom domain chosen without a name, a bad cache value.
    await page.getByTestId('origin-use-custom-domain').check();
    await page.getByTestId('origin-default-cache').fill('ten');
    await page.getByTestId('origin-submit').click();
    await expect(page.getByText('数値を入力してください')).toBeVisible();
    await page.getByTestId('origin-default-cache').fill('3600');
    await page.getByTestId('origin-submit').click();
    await expect(page.getByText('独自ドメインを指定してください')).toBeVisible();
    await page.getByTestId('origin-use-custom-domain').uncheck();
    await page.getByTestId('origin-submit').click();
    await expect(page.locator('#origin-host + .invalid-feedback')).toHaveText('必須項目です');

    await page.getByTestId('origin-scheme').selectOption('http');
    await page.getByTestId('origin-host').fill(`127.0.0.1:${imagePort}`);
    await page.getByTestId('origin-rule-add').click();
    await page.getByTestId('origin-rule-pattern').fill('thumbs/');
    await page.getByTestId('origin-rule-parameter').fill('w=120');
    await page.getByTestId('origin-description').fill('E2E photos');
    await screenshot(page, 'origin-create-ja');
    await page.getByTestId('origin-submit').click();

    await expect(page).toHaveURL(/\/origin\/index$/);
    await expect(page.getByTestId('flash-bar')).toContainText('オリジンを作成しました');
    const row = page.getByTestId('origin-row').filter({ hasText: 'E2E photos' });
    await expect(row.getByTestId('origin-source')).toHaveText(`http://127.0.0.1:${imagePort}`);
    // Updating until an edge has loaded it; the list asks again by itself.
    await expect(row.getByTestId('origin-status')).toHaveAttribute('data-status', 'applied', {
      timeout: 15_000,
    });
    originID = (await row.getAttribute('data-origin-id')) ?? '';
    originName = (await row.getByTestId('origin-name').textContent()) ?? '';
    expect(originName).toMatch(/^[a-z0-9]{12}\./);
    await screenshot(page, 'origin-index-ja');
  });

  test('the preview converts the image, its URL is looked up and deleted on the cache screen', async ({
    page,
  }) => {
    test.setTimeout(60_000);
    await signIn(page);
    await page.goto('/preview');
    await page.getByTestId('preview-origin').selectOption(originID);
    await page.getByTestId('preview-path').fill('/photo.jpg');
    await page.getByTestId('preview-width').fill('300');
    await page.getByTestId('preview-submit').click();

    const converted = page.getByTestId('preview-converted');
    await expect(converted).toHaveAttribute('data-state', 'loaded', { timeout: 20_000 });
    await expect(converted.getByTestId('preview-dimensions')).toHaveAttribute('data-width', '300');
    await expect(converted.getByTestId('preview-dimensions')).toHaveAttribute('data-height', '225');
    await expect(converted.getByTestId('preview-format')).toHaveText('WEBP');
    await expect(page.getByTestId('preview-original').getByTestId('preview-dimensions')).toHaveAttribute(
      'data-width',
      '800',
    );
    await expect(converted.getByTestId('preview-saving')).toBeVisible();
    for (const format of ['jpg', 'webp', 'avif']) {
      await expect(page.getByTestId(`preview-compare-${format}`)).toHaveAttribute('data-state', 'loaded', {
        timeout: 20_000,
      });
    }
    await expect(page.getByTestId('preview-compare-avif').getByTestId('preview-format')).toHaveText('AVIF');
    const url = (await page.getByTestId('preview-url').textContent()) ?? '';
    expect(url).toContain(`${originName}:`);
    expect(url).toContain('/w=300,f=webp/photo.jpg');
    await page.getByTestId('preview-copy').click();
    await expect(page.getByTestId('flash-bar')).toContainText('クリップボードにコピーしました');
    await screenshot(page, 'preview-ja');

    await page.getByTestId('preview-cache-link').click();
    await expect(page).toHaveURL(/\/cache\?/);
    await expect(page.getByTestId('cache-url')).toHaveValue(url);
    await page.getByTestId('cache-lookup').click();
    await expect(page.getByTestId('cache-variant').first()).toBeVisible();
    expect(await page.getByTestId('cache-variant').count()).toBeGreaterThanOrEqual(4);
    await screenshot(page, 'cache-ja');
    await page.getByTestId('cache-delete').click();
    await page.getByTestId('cache-delete-confirm').click();
    await expect(page.getByTestId('flash-bar')).toContainText('キャッシュを削除しました');
    await expect(page.getByTestId('cache-result')).toHaveAttribute('data-action', 'delete');
    await page.getByTestId('cache-lookup').click();
    await expect(page.getByTestId('cache-none')).toHaveText('キャッシュが見つかりません');

    // The cache screen on its own: an origin must be chosen.
    await page.goto('/cache');
    await page.getByTestId('cache-url').fill('/photo.jpg');
    await page.getByTestId('cache-lookup').click();
    await expect(page.getByTestId('cache-form').getByText('オリジンを選択してください').last()).toBeVisible();
  });

  test("a refused preview says why in the reader's language, never in the edge's English", async ({
    page,
  }) => {
    await signIn(page);
    await page.goto('/preview');
    await page.getByTestId('preview-origin').selectOption(originID);
    await page.getByTestId('preview-path').fill('/missing.jpg');
    await page.getByTestId('preview-submit').click();
    const converted = page.getByTestId('preview-converted');
    const reason = converted.getByTestId('preview-error-reason');
    await expect(reason).toHaveAttribute('data-code', 'origin-not-found');
    await expect(reason).toHaveText('オリジンのこのパスに画像がありません。');
    await expect(converted).not.toContainText('image not found');
  });

  test('with signing required, the preview URL carries a signature the edge accepts', async ({ page }) => {
    test.setTimeout(60_000);
    await signIn(page);
    await page.goto(`/origin/${originID}/update`);
    await page.getByTestId('origin-enable-signed-url').check();
    await page.getByTestId('origin-generate-secret').click();
    await expect(page.getByTestId('origin-signing-secret')).toHaveValue(/^[A-Za-z0-9]{20}$/);
    await page.getByTestId('origin-submit').click();
    await expect(page.getByTestId('origin-signing-modal')).toBeVisible();
    await screenshot(page, 'origin-signing-confirm-ja');
    await page.getByTestId('origin-signing-confirm').click();
    await expect(page).toHaveURL(/\/origin\/index$/);
    await expect(page.getByTestId('flash-bar')).toContainText('オリジンを更新しました');
    const row = page.locator(`[data-testid="origin-row"][data-origin-id="${originID}"]`);
    await expect(row.getByTestId('origin-status')).toHaveAttribute('data-status', 'applied', {
      timeout: 15_000,
    });

    await page.goto('/preview');
    await page.getByTestId('preview-origin').selectOption(originID);
    await page.getByTestId('preview-path').fill('/photo.jpg');
    await page.getByTestId('preview-width').fill('200');
    await page.getByTestId('preview-submit').click();
    await expect(page.getByTestId('preview-url')).toContainText('sig=1.');
    await expect(page.getByTestId('preview-converted')).toHaveAttribute('data-state', 'loaded', {
      timeout: 20_000,
    });
    await expect(page.getByTestId('preview-converted').getByTestId('preview-dimensions')).toHaveAttribute(
      'data-width',
      '200',
    );
  });

  test('a custom domain takes a certificate, shown with its fingerprint and expiry', async ({ page }) => {
    test.setTimeout(60_000);
    await signIn(page);
    await page.goto(`/origin/${originID}/cert`);
    await expect(page.getByTestId('origin-cert-invalid')).toContainText(
      'SSL証明書をアップロードできないオリジンです',
    );

    await page.goto(`/origin/${originID}/update`);
    await page.getByTestId('origin-use-custom-domain').check();
    await page.getByTestId('origin-custom-domain').fill(CUSTOM_DOMAIN);
    await page.getByTestId('origin-submit').click();
    await expect(page.getByTestId('origin-form').getByText('必須項目です')).toBeVisible();
    await page.getByTestId('origin-domain-confirmed').check();
    await page.getByTestId('origin-submit').click();
    await expect(page.getByTestId('flash-bar')).toContainText('オリジンを更新しました');
    const row = page.locator(`[data-testid="origin-row"][data-origin-id="${originID}"]`);
    await expect(row.getByTestId('origin-tls')).toHaveAttribute('data-state', 'notSet');
    await row.getByTestId('origin-cert').click();

    await page
      .getByTestId('origin-cert-certificate')
      .fill('-----BEGIN CERTIFICATE-----\nnot a certificate\n');
    await page.getByTestId('origin-cert-key').fill('-----BEGIN PRIVATE KEY-----\nnope\n');
    await page.getByTestId('origin-cert-submit').click();
    await expect(page.getByTestId('flash-bar')).toContainText('PEM');
    const { certificate, privateKey } = selfSignedCertificate(CUSTOM_DOMAIN);
    await page.getByTestId('origin-cert-certificate').fill(certificate);
    await page.getByTestId('origin-cert-key').fill(privateKey);
    await page.getByTestId('origin-cert-submit').click();
    await expect(page.getByTestId('flash-bar')).toContainText('SSL証明書をアップロードしました');
    await expect(page.getByTestId('origin-cert-fingerprint')).toHaveText(/^[0-9A-F:]{20,}/);
    await expect(page.getByTestId('origin-tls')).toHaveAttribute('data-state', 'expiresSoon');
    await screenshot(page, 'origin-cert-ja');
  });

  test('every origin screen in English', async ({ page }) => {
    test.setTimeout(60_000);
    await useLanguage(page, 'en');
    await signIn(page);
    await expect(page.getByTestId('origin-table')).toBeVisible();
    await expect(page.getByText('Expires within a month')).toBeVisible();
    await screenshot(page, 'origin-index-en');
    await page.goto(`/origin/copy/${originID}`);
    await expect(page.getByTestId('origin-host')).toHaveValue(`127.0.0.1:${imagePort}`);
    await expect(page.getByTestId('origin-use-custom-domain')).not.toBeChecked();
    await screenshot(page, 'origin-copy-en');
    await page.goto(`/origin/${originID}/update`);
    await expect(page.getByTestId('origin-generated-name')).toHaveText(originName);
    await screenshot(page, 'origin-update-en');
    await page.goto(`/origin/${originID}/cert`);
    await expect(page.getByTestId('origin-cert-current')).toBeVisible();
    await screenshot(page, 'origin-cert-en');
    await page.goto('/origin/999999/update');
    await expect(page.getByTestId('origin-not-found')).toContainText(
      'Origin could not be found (ID: 999999)',
    );
    await page.goto('/cache');
    await expect(page.getByTestId('cache-form')).toBeVisible();
    await screenshot(page, 'cache-en');
    await page.goto('/preview');
    await page.getByTestId('preview-origin').selectOption(originID);
    await page.getByTestId('preview-path').fill('/photo.jpg');
    await page.getByTestId('preview-submit').click();
    await expect(page.getByTestId('preview-converted')).toHaveAttribute('data-state', 'loaded', {
      timeout: 20_000,
    });
    await screenshot(page, 'preview-en');
    await page.goto(`/origin/${originID}/destroy`);
    await screenshot(page, 'origin-destroy-en');
  });

  test('the origin is deleted after its confirmation', async ({ page }) => {
    await signIn(page);
    await page.goto(`/origin/${originID}/destroy`);
    await expect(page.getByTestId('origin-destroy-name')).toHaveText(originName);
    await screenshot(page, 'origin-destroy-ja');
    await page.getByTestId('origin-destroy-confirm').click();
    await expect(page).toHaveURL(/\/origin\/index$/);
    await expect(page.getByTestId('flash-bar')).toContainText('オリジンを削除しました');
    await expect(page.locator(`[data-testid="origin-row"][data-origin-id="${originID}"]`)).toHaveCount(0);
  });
});

test.describe('guest preview', () => {
  for (const language of ['ja', 'en'] as const) {
    test(`the sample images convert without login (${language})`, async ({ page }) => {
      test.setTimeout(60_000);
      await useLanguage(page, language);
      await page.goto('/preview-guest');
      const converted = page.getByTestId('preview-converted');
      await expect(converted).toHaveAttribute('data-state', 'loaded', { timeout: 20_000 });
      await expect(converted.getByTestId('preview-dimensions')).toHaveAttribute('data-width', '600');
      await expect(page.getByTestId('preview-url')).toContainText('samples.');
      for (const format of ['jpg', 'webp', 'avif']) {
        await expect(page.getByTestId(`preview-compare-${format}`)).toHaveAttribute('data-state', 'loaded', {
          timeout: 20_000,
        });
      }
      await screenshot(page, `preview-guest-${language}`);
    });
  }
});
