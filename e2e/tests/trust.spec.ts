import { mkdirSync, readFileSync } from 'node:fs';
import { expect, test, type Browser, type Page } from '@playwright/test';
import Papa from 'papaparse';
import { ADMIN, STATS_USER } from '../support/fixtures.ts';
import { api, UI_API } from './edge.ts';
import { ARTIFACTS, login } from './helpers.ts';

/**
 * Console trust (issue #17): one message on a refused page, a member disabled while logged in told
 * why on the login page, an empty token list that says so, destructive actions that ask first,
 * and a statistics CSV in one language with the chart's daily rows.
 */

const SHOTS = `${ARTIFACTS}trust/`;
mkdirSync(SHOTS, { recursive: true });
const VIEWPORTS = [
  { name: 'wide', width: 1280, height: 800 },
  { name: 'narrow', width: 390, height: 844 },
] as const;

/** The screen at both sizes the console is checked at; the page is left at the wide size. */
async function shoot(page: Page, name: string) {
  for (const viewport of [...VIEWPORTS].reverse()) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(150); // let the layout settle after the resize
    await page.screenshot({ path: `${SHOTS}${name}-${viewport.name}.png`, fullPage: true });
  }
}

type Language = 'ja' | 'en';

async function newPage(browser: Browser, language: Language): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript((value) => window.localStorage.setItem('ukiyo.language', value), language);
  return context.newPage();
}

const TEXT = {
  ja: {
    sessionInvalid: 'セッションが無効です。再度ログインしてください',
    refused: 'このページへのアクセス権限がありません',
    notFound: 'ページが見つかりません',
    tokenEmpty: 'APIトークンはまだ発行されていません。',
    csvHeader: [
      '日付 (UTC)',
      'オリジン',
      'リクエスト数',
      '転送量 (GiB)',
      '2xx 成功',
      '304 未変更',
      '4xx クライアントエラー',
      '5xx サーバーエラー',
      'キャッシュヒット率 (%)',
      'オリジンからの取得量 (GiB)',
      '変換で削減した転送量 (GiB)',
    ],
    activationNotFound: 'この有効化リンクは無効です',
  },
  en: {
    sessionInvalid: 'session is invalid. please login again',
    refused: 'You do not have access to this page',
    notFound: 'Page not found',
    tokenEmpty: 'No API token has been issued.',
    csvHeader: [
      'Date (UTC)',
      'Origin',
      'Requests',
      'Outbound (GiB)',
      '2xx success',
      '304 not modified',
      '4xx client error',
      '5xx server error',
      'Cache hit ratio (%)',
      'Fetched from origins (GiB)',
      'Saved by conversion (GiB)',
    ],
    activationNotFound: 'This activation link is not valid',
  },
} as const;

for (const language of ['ja', 'en'] as const) {
  const text = TEXT[language];
  const MEMBER = { email: `trust-${language}@e2e.example.com`, password: `trust-initial-${language}` };
  const PASSWORD = `trust-member-${language}-pass`;

  test.describe.serial(`trust (${language})`, () => {
    test('a refused page says so once', async ({ browser }) => {
      const page = await newPage(browser, language);
      await login(page, STATS_USER.email, STATS_USER.password);
      await expect(page).toHaveURL(/\/statistics$/);
      await page.goto('/origin/index');
      await expect(page).toHaveURL(/\/404$/);
      await expect(page.getByTestId('flash-message')).toHaveCount(1);
      await expect(page.getByTestId('flash-message')).toHaveText(text.refused);
      await expect(page.getByTestId('not-found')).toHaveAttribute('data-refused', 'true');
      await expect(page.getByText(text.notFound)).toHaveCount(0);
      await shoot(page, `refused-${language}`);
      await page.context().close();
    });

    test('an unknown activation link reads as a message for people', async ({ browser }) => {
      const page = await newPage(browser, language);
      await page.goto('/activate/not-a-real-token');
      await expect(page.getByTestId('activate-error')).toContainText(text.activationNotFound);
      await shoot(page, `activate-unknown-${language}`);
      await page.context().close();
    });

    test('a member disabled while logged in is told on the login page', async ({ browser }) => {
      test.setTimeout(90_000);
      const admin = await newPage(browser, language);
      await login(admin, ADMIN.email, ADMIN.password);
      await expect(admin).toHaveURL(/\/origin\/index$/);
      const added = await admin.request.post(api('user.add'), {
        headers: UI_API,
        data: {
          user: { emailAddress: MEMBER.email, fullName: 'Trust Member', permission: 8 | 4 },
          password: MEMBER.password,
        },
      });
      expect(added.ok(), await added.text()).toBe(true);
      const { user } = (await added.json()) as { user: { userID: number } };

      // The member logs in (the first password activates the account).
      const member = await newPage(browser, language);
      await login(member, MEMBER.email, MEMBER.password);
      await expect(member).toHaveURL(new RegExp(`/user/${user.userID}/updatePassword$`));
      const activated = await member.request.post(api('user.update_password'), {
        headers: UI_API,
        data: { userId: user.userID, oldPassword: MEMBER.password, newPassword: PASSWORD },
      });
      expect(activated.ok(), await activated.text()).toBe(true);
      await member.goto('/');
      await expect(member).toHaveURL(/\/statistics$/);

      // Their token form offers only what they hold.
      await member.goto('/token/new');
      await expect(member.locator('[data-testid^="token-permission-"][data-bit]')).toHaveCount(2);
      await expect(member.getByTestId('token-permission-statistics')).toBeVisible();
      await expect(member.getByTestId('token-permission-cache')).toBeVisible();
      await expect(member.getByTestId('token-permission-origin')).toHaveCount(0);
      await shoot(member, `token-new-member-${language}`);

      // A token issued, disabled (after a question), deleted: the list then says it is empty,
      // under one message.
      await member.getByTestId('token-description').fill('trust token');
      await member.getByTestId('token-submit').click();
      await expect(member.getByTestId('token-secret')).toBeVisible();
      await member.getByTestId('token-back').click();
      await member.getByTestId('token-disable').click();
      await expect(member.getByTestId('token-disable-modal')).toBeVisible();
      await shoot(member, `token-disable-confirm-${language}`);
      await member.getByTestId('token-disable-confirm').click();
      await expect(member.getByTestId('token-status')).toHaveAttribute('data-enabled', 'false');
      await member.getByTestId('token-delete').click();
      await member.getByTestId('token-delete-confirm').click();
      await expect(member.getByTestId('token-empty')).toHaveText(text.tokenEmpty);
      await expect(member.getByTestId('flash-message')).toHaveCount(1);
      await shoot(member, `token-empty-${language}`);

      // The administrator disables the member, after a question.
      await admin.goto('/member/');
      const row = admin.locator(`[data-testid="member-row"][data-email="${MEMBER.email}"]`);
      await row.getByTestId('member-toggle-enabled').click();
      await expect(admin.getByTestId('member-disable-modal')).toContainText(MEMBER.email);
      await shoot(admin, `member-disable-confirm-${language}`);
      await admin.getByTestId('member-disable-confirm').click();
      await expect(row.getByTestId('member-enabled')).toHaveAttribute('data-enabled', 'false');

      // The member's next step lands on the login page with the reason.
      await member.getByTestId('nav-statistics').click();
      await expect(member).toHaveURL(/\/auth\/login$/);
      await expect(member.getByTestId('flash-message')).toHaveText(text.sessionInvalid);
      await shoot(member, `session-invalid-${language}`);

      // A member that does not exist is said once, on the page.
      await admin.goto('/member/999999/update');
      await expect(admin.getByTestId('member-not-found')).toBeVisible();
      await expect(admin.getByTestId('flash-message')).toHaveCount(0);
      await shoot(admin, `member-not-found-${language}`);

      // The administrator's cache deletion asks first too.
      await admin.goto('/cache');
      await admin.getByTestId('cache-origin').selectOption({ index: 1 });
      await admin.getByTestId('cache-url').fill('/photo.jpg');
      await admin.getByTestId('cache-delete').click();
      await expect(admin.getByTestId('cache-delete-modal')).toBeVisible();
      await shoot(admin, `cache-delete-confirm-${language}`);
      await admin.getByTestId('cache-delete-cancel').click();
      await expect(admin.getByTestId('cache-delete-modal')).toHaveCount(0);
      await admin.context().close();
      await member.context().close();
    });

    test('the statistics CSV has the chart days in one language', async ({ browser }) => {
      const page = await newPage(browser, language);
      await login(page, ADMIN.email, ADMIN.password);
      await expect(page).toHaveURL(/\/origin\/index$/);
      await page.goto('/statistics');
      await expect(page.getByTestId('stats-total-requests')).toBeVisible();
      const items = await page
        .getByTestId('stats-row')
        .evaluateAll((rows) =>
          rows.map((row) => [
            row.getAttribute('data-item-name') ?? '',
            Number(
              (row.querySelector('[data-testid="stats-row-requests"]')?.textContent ?? '').replace(/\D/g, ''),
            ),
          ]),
        );
      const download = page.waitForEvent('download');
      await page.getByTestId('stats-csv').click();
      const csv = readFileSync(await (await download).path(), 'utf8');
      expect(csv.charCodeAt(0)).toBe(0xfeff);
      const parsed = Papa.parse<string[]>(csv.slice(1), { skipEmptyLines: true });
      expect(parsed.errors).toEqual([]);
      const [header, ...rows] = parsed.data;
      expect(header).toEqual(text.csvHeader);

      // Every day of this UTC month for every item, as the chart draws them, summing to the table.
      const now = new Date();
      const days = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).getUTCDate();
      expect(rows).toHaveLength(days * items.length);
      for (const [name, requests] of items) {
        const daily = rows.filter((cells) => cells[1] === name);
        expect(daily.map((cells) => Number(cells[0]!.slice(8)))).toEqual(
          Array.from({ length: days }, (_, index) => index + 1),
        );
        expect(daily.reduce((sum, cells) => sum + Number(cells[2]), 0)).toBe(requests);
      }
      await shoot(page, `statistics-${language}`);
      await page.context().close();
    });
  });
}
