import { expect, test, type Page } from '@playwright/test';
import { Secret, TOTP } from 'otpauth';
import { ADMIN } from '../support/fixtures.ts';
import { login, screenshot } from './helpers.ts';

const OWNER = {
  email: 'owner@e2e-accounts.example.com',
  password: 'owner-initial-pass',
  memberCode: 'ACC0001',
};
const MEMBER = { email: 'member@e2e-accounts.example.com', password: 'member-initial-pass' };

async function logout(page: Page) {
  await page.getByTestId('user-menu').click();
  await page.getByTestId('nav-logout').click();
  await expect(page).toHaveURL(/\/auth\/login$/);
}

/** The activation link of the newest mail to `to`, read on the administrator's outbox screen. */
async function activationLinkFromOutbox(page: Page, to: string): Promise<string> {
  await page.goto('/admin/outbox');
  const row = page.locator(`[data-testid="outbox-row"][data-to="${to}"]`).first();
  await row.getByTestId('outbox-toggle').click();
  const link = page.getByTestId('outbox-link').first();
  await expect(link).toBeVisible();
  await screenshot(page, 'admin-outbox-ja');
  return new URL((await link.getAttribute('href'))!).pathname;
}

test('from a new organization to a member, a token and two-step login', async ({ page }) => {
  test.setTimeout(120_000);

  // The administrator creates an organization and its first user.
  await login(page, ADMIN.email, ADMIN.password);
  await expect(page).toHaveURL(/\/origin\/index$/);
  await page.goto('/user/create');
  await page.getByTestId('register-member-code').fill(OWNER.memberCode);
  await page.getByTestId('register-account-name').fill('Accounts E2E');
  await page.getByTestId('register-organization-name').fill('Accounts Org');
  await page.getByTestId('register-service-code').fill('acc-e2e');
  await page.getByTestId('register-email').fill(OWNER.email);
  await page.getByTestId('register-full-name').fill('Owner Person');
  await page.getByTestId('register-password').fill(OWNER.password);
  await page.getByTestId('register-password-confirmation').fill(OWNER.password);
  for (const name of ['channel', 'cache', 'statistics', 'member', 'origin', 'organization']) {
    await page.getByTestId(`register-permission-${name}`).check();
  }
  await screenshot(page, 'user-create-ja');
  await page.getByTestId('register-submit').click();
  await expect(page.locator('[data-testid="organization-row"][data-service-code="acc-e2e"]')).toBeVisible();

  // The activation mail is opened and the user activates.
  const activation = await activationLinkFromOutbox(page, OWNER.email);
  await logout(page);
  await page.goto(activation);
  await expect(page.getByTestId('activate-success')).toBeVisible();
  await expect(page.getByTestId('activate-email')).toContainText(OWNER.email);
  await screenshot(page, 'activate-ja');

  // The owner logs in and invites a member with some permissions.
  await login(page, OWNER.email, OWNER.password);
  await expect(page).toHaveURL(/\/origin\/index$/);
  await page.goto('/member/new');
  await page.getByTestId('member-email').fill(MEMBER.email);
  await page.getByTestId('member-full-name').fill('Member Person');
  await page.getByTestId('member-password').fill(MEMBER.password);
  await page.getByTestId('member-password-confirmation').fill(MEMBER.password);
  await page.getByTestId('member-permission-statistics').check();
  await screenshot(page, 'member-new-ja');
  await page.getByTestId('member-submit').click();
  await expect(page).toHaveURL(/\/member\/$/);
  const memberRow = page.locator(`[data-testid="member-row"][data-email="${MEMBER.email}"]`);
  await expect(memberRow).toBeVisible();

  // Grant one more permission on the member's page.
  await memberRow.getByTestId('member-edit').click();
  await page.getByTestId('member-permission-cache').check();
  await page.getByTestId('member-submit').click();
  await expect(page).toHaveURL(/\/member\/$/);
  await expect(memberRow.locator('[data-testid="permission-badge"][data-permission="cache"]')).toBeVisible();
  await screenshot(page, 'member-index-ja');

  // A token is created (secret shown once), then revoked.
  await page.goto('/token/new');
  await page.getByTestId('token-description').fill('deploy script');
  await page.getByTestId('token-submit').click();
  await expect(page.getByTestId('token-secret')).toBeVisible();
  const encoded = (await page.getByTestId('token-encoded').textContent())!.trim();
  const info = await page.request.post('/api/token.info', {
    headers: { Authorization: `Bearer ${encoded}` },
  });
  expect(info.status()).toBe(200);
  await screenshot(page, 'token-issued-ja');
  await page.getByTestId('token-back').click();
  const tokenRow = page.locator('[data-testid="token-row"][data-description="deploy script"]');
  await expect(tokenRow.getByTestId('token-masked')).toHaveText(/^\*{12}.{4}$/);
  await tokenRow.getByTestId('token-disable').click();
  await page.getByTestId('token-disable-confirm').click();
  await expect(tokenRow.getByTestId('token-status')).toHaveAttribute('data-enabled', 'false');
  const revoked = await page.request.post('/api/token.info', {
    headers: { Authorization: `Bearer ${encoded}` },
  });
  expect(revoked.status()).toBe(401);
  await screenshot(page, 'token-index-ja');

  // Two-step login: enrol with the QR code's secret, keep the backup codes.
  await page.goto('/user/update');
  await page.getByTestId('totp-begin').click();
  await expect(page.getByTestId('totp-qr')).toBeVisible();
  const secret = (await page.getByTestId('totp-secret').textContent())!.trim();
  const totp = new TOTP({ secret: Secret.fromBase32(secret) });
  await screenshot(page, 'totp-enrol-ja');
  await page.getByTestId('totp-code').fill(totp.generate());
  await page.getByTestId('totp-enable-submit').click();
  await expect(page.getByTestId('backup-code')).toHaveCount(10);
  const backupCode = (await page.getByTestId('backup-code').first().textContent())!.trim();
  await screenshot(page, 'backup-codes-ja');
  await page.getByTestId('backup-codes-done').click();
  await logout(page);

  // Logging in again needs a code (a later one than enrolment's: each is accepted once; the
  // next step's is within the allowed drift)...
  await login(page, OWNER.email, OWNER.password);
  await expect(page.getByTestId('totp-form')).toBeVisible();
  await page.getByTestId('login-totp').fill(totp.generate({ timestamp: Date.now() + 30_000 }));
  await page.getByTestId('totp-submit').click();
  await expect(page).toHaveURL(/\/origin\/index$/);
  await logout(page);

  // ...or a backup code, once.
  await login(page, OWNER.email, OWNER.password);
  await page.getByTestId('login-totp').fill(backupCode);
  await page.getByTestId('totp-submit').click();
  await expect(page).toHaveURL(/\/origin\/index$/);
  await logout(page);
  await login(page, OWNER.email, OWNER.password);
  await page.getByTestId('login-totp').fill(backupCode);
  await page.getByTestId('totp-submit').click();
  await expect(page.getByTestId('totp-form')).toContainText('確認コードが正しくありません');
  await screenshot(page, 'totp-login-refused-ja');
});

test('account screens in English', async ({ page }) => {
  await page.goto('/auth/login');
  await page.getByTestId('language-switch').click();
  await page.getByTestId('language-en').click();
  await login(page, ADMIN.email, ADMIN.password);
  await expect(page).toHaveURL(/\/origin\/index$/);
  for (const [path, name] of [
    ['/plan/', 'plan-en'],
    ['/organization/update', 'organization-update-en'],
    ['/member/', 'member-index-en'],
    ['/token/', 'token-index-en'],
    ['/user/update', 'user-update-en'],
    ['/user/activity', 'user-activity-en'],
  ] as const) {
    await page.goto(path);
    await expect(page.locator('h1')).toBeVisible();
    await screenshot(page, name);
  }
  await expect(page.getByTestId('activity-row').first()).toBeVisible();
  await logout(page);
  await page.goto('/forget/');
  await page.getByTestId('forget-email').fill(ADMIN.email);
  await page.getByTestId('forget-submit').click();
  await expect(page.getByTestId('forget-sent')).toBeVisible();
  await screenshot(page, 'forget-sent-en');
});
