import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import Papa from 'papaparse';
import sharp from 'sharp';
import { ADMIN, STATS_USER } from '../support/fixtures.ts';
import { api, fetchFromEdge, UI_API } from './edge.ts';
import { ARTIFACTS, login, screenshot } from './helpers.ts';

let imageServer: Server;
let imagePort: number;

/** This month's requests of one origin, as the statistics report them. */
async function originRequests(requestContext: APIRequestContext, originName: string): Promise<number> {
  const now = new Date();
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
  const response = await requestContext.post(api('statistics.origins'), {
    headers: UI_API,
    data: { from, to },
  });
  expect(response.ok()).toBe(true);
  const { origins } = (await response.json()) as { origins: { name: string; stats: { requests: number } }[] };
  return origins.find((origin) => origin.name === originName)?.stats.requests ?? 0;
}

/** The language the console starts in (it remembers the choice in localStorage). */
async function useLanguage(page: Page, language: 'ja' | 'en') {
  await page.addInitScript((value) => window.localStorage.setItem('ukiyo.language', value), language);
}

test.beforeAll(async () => {
  const photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#c0392b' } })
    .jpeg()
    .toBuffer();
  imageServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/jpeg' }).end(photo));
  await new Promise<void>((resolve) => imageServer.listen(0, '127.0.0.1', resolve));
  imagePort = (imageServer.address() as AddressInfo).port;
});

test.afterAll(async () => {
  await new Promise((resolve) => imageServer.close(resolve));
});

test.describe.serial('usage', () => {
  let originName = '';

  test('traffic through the edge shows on the dashboard and the statistics', async ({ page }) => {
    test.setTimeout(90_000);
    await login(page, ADMIN.email, ADMIN.password);
    await expect(page).toHaveURL(/\/origin\/index$/);

    const added = await page.request.post(api('origin.add'), {
      headers: UI_API,
      data: {
        origin: {
          kind: 0,
          // Cached for an hour, so that a repeated URL is a hit.
          defaultCache: 3600,
          config: { scheme: 'http', host: `127.0.0.1:${imagePort}`, pathPrefix: '', rewriteHost: '' },
        },
      },
    });
    expect(added.ok(), await added.text()).toBe(true);
    originName = ((await added.json()) as { origin: { name: string } }).origin.name;

    // The edge picks up new origins on its next poll (1 s).
    await expect
      .poll(async () => (await fetchFromEdge(originName, '/w=120/photo.jpg')).status, {
        timeout: 20_000,
        intervals: [500],
      })
      .toBe(200);
    for (const params of ['w=200', 'w=80,f=png', 'w=300,h=100', 'f=webp']) {
      expect((await fetchFromEdge(originName, `/${params}/photo.jpg`)).status).toBe(200);
    }
    // The edge writes usage every 2 s; other tests' origins count in the same organization.
    await expect
      .poll(() => originRequests(page.request, originName), { timeout: 20_000, intervals: [1000] })
      .toBe(5);

    // A hit and a refused URL for the analytics.
    expect((await fetchFromEdge(originName, '/w=200/photo.jpg')).status).toBe(200);
    expect((await fetchFromEdge(originName, '/zz=1/photo.jpg')).status).toBe(400);
    await expect
      .poll(() => originRequests(page.request, originName), { timeout: 20_000, intervals: [1000] })
      .toBe(7);

    await page.goto('/dashboard');
    await expect(page).toHaveTitle(/^ダッシュボード/);
    await expect(page.getByTestId('usage-period')).toContainText('UTC');
    await expect(page.getByTestId('usage-utc-note')).toContainText('UTC+9');
    await expect(page.getByTestId('usage-requests')).not.toHaveText('0');
    await expect(page.getByTestId('usage-outbound')).toContainText('GiB');
    // An image organization: no live figures.
    await expect(page.getByTestId('usage-live-seconds')).toHaveCount(0);
    // This month against the plan's prices (plan_prices), with last month and a projection.
    await expect(page.getByTestId('plan-usage-requests-included')).toContainText('含まれる量');
    await expect(page.getByTestId('plan-usage-cost')).toContainText('￥');
    await expect(page.getByTestId('plan-usage-requests-last-month')).toHaveText('0');
    await expect(page.getByTestId('stats-chart').locator('canvas')).toBeVisible();
    await screenshot(page, 'dashboard-ja');

    await page.goto('/statistics');
    await expect(page.getByTestId('stats-total-requests')).not.toHaveText('0');
    const row = page.locator(`[data-testid="stats-row"][data-item-name="${originName}"]`);
    await expect(row).toBeVisible();
    await expect(row.getByTestId('stats-row-requests')).toHaveText(/^[1-9]/);
    await expect(page.getByTestId('stats-chart')).toHaveAttribute('data-state', 'ready');
    await expect(page.getByTestId('stats-chart').locator('canvas')).toBeVisible();
    await screenshot(page, 'statistics-ja');

    // Delivery analytics of the one origin: every answer counted by status and cache result.
    await page.getByTestId('analytics-origin').selectOption({ label: originName });
    await expect(page.getByTestId('analytics-status-clientError')).toContainText('1');
    await expect(page.getByTestId('analytics-cache-memory')).toContainText('1');
    await expect(page.getByTestId('analytics-hit-ratio')).toHaveText(/%$/);
    await expect(page.locator('[data-testid="analytics-top-row"][data-key="/photo.jpg"]')).toContainText('6');
    await page.getByTestId('analytics-top-errors').click();
    await expect(page.locator('[data-testid="analytics-top-row"][data-key="bad-parameter"]')).toContainText(
      '変換パラメータ',
    );
    await page.getByTestId('analytics-granularity-hour').click();
    await expect(page.getByTestId('analytics-chart')).toHaveAttribute('data-state', 'ready');
    await page.getByTestId('analytics').screenshot({ path: `${ARTIFACTS}statistics-analytics-ja.png` });
    await page.getByTestId('stats-metric-outbound').click();
    await expect(page.getByTestId('stats-metric-outbound')).toHaveAttribute('aria-pressed', 'true');

    const download = page.waitForEvent('download');
    await page.getByTestId('stats-csv').click();
    const csv = readFileSync(await (await download).path(), 'utf8');
    expect(csv.charCodeAt(0)).toBe(0xfeff);
    const rows = Papa.parse<string[]>(csv.slice(1), { skipEmptyLines: true }).data;
    // Headers in the screen's language; one row per origin and day, as the chart shows them.
    expect(rows[0]).toEqual([
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
    ]);
    const originRows = rows.slice(1).filter((cells) => cells[1] === originName);
    expect(originRows.reduce((sum, cells) => sum + Number(cells[2]), 0)).toBeGreaterThanOrEqual(5);
    // The analytics of the same days: one refusal (4xx) among them.
    expect(originRows.reduce((sum, cells) => sum + Number(cells[6]), 0)).toBe(1);

    // The month picker moves to the previous month (no traffic there) and back.
    await page.getByTestId('stats-month-prev').click();
    await expect(page).toHaveURL(/month=/);
    await expect(page.getByTestId('stats-total-requests')).toHaveText('0');
    await expect(page.getByTestId('stats-month-next')).toBeEnabled();
    await page.getByTestId('stats-month-next').click();
    await expect(page.getByTestId('stats-total-requests')).not.toHaveText('0');
    await expect(page.getByTestId('stats-month-next')).toBeDisabled();
  });

  test('administrators see every organization and download the invoice CSV', async ({ page }) => {
    await login(page, ADMIN.email, ADMIN.password);
    await expect(page).toHaveURL(/\/origin\/index$/);
    await page.getByTestId('nav-adminStatistics').click();
    await expect(page).toHaveURL(/\/admin\/statistics$/);
    const demo = page.locator('[data-testid="admin-stats-row"][data-service-code="demo-image"]');
    await expect(demo.getByTestId('admin-stats-requests')).toHaveText(/^[1-9]/);
    // A click on a numeric heading sorts by it, largest first; another on a text heading, A to Z.
    await page.getByTestId('admin-stats-sort-requests').click();
    const requests = await page
      .getByTestId('admin-stats-requests')
      .evaluateAll((cells) => cells.map((cell) => Number((cell.textContent ?? '').replace(/\D/g, ''))));
    expect(requests).toEqual([...requests].sort((a, b) => b - a));
    await page.getByTestId('admin-stats-sort-serviceCode').click();
    const codes = await page
      .getByTestId('admin-stats-row')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-service-code') ?? ''));
    // The screen sorts text as people read it, numbers within by value ("a7x" before "a79b").
    const collator = new Intl.Collator('ja', { numeric: true });
    expect(codes).toEqual([...codes].sort(collator.compare));
    await page.getByTestId('admin-stats-sort-serviceCode').click();
    await expect(page.getByTestId('admin-stats-row').first()).toHaveAttribute(
      'data-service-code',
      [...codes].sort((a, b) => collator.compare(b, a))[0]!,
    );
    await screenshot(page, 'admin-statistics-ja');

    await page.getByTestId('nav-adminInvoices').click();
    await expect(page).toHaveURL(/\/admin\/invoices$/);
    await expect(page.getByTestId('invoice-row').first()).toBeVisible();
    await screenshot(page, 'admin-invoices-ja');
    const download = page.waitForEvent('download');
    await page.getByTestId('invoice-csv').click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/^invoices-\d{4}-\d{2}\.csv$/);
    const bytes = readFileSync(await file.path());
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.toString('utf8').slice(1);
    expect(text.split('\r\n')[0]).toBe('memberId,serviceCd,name,transferGiB,requests,amount,currency');
    const parsed = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true });
    expect(parsed.errors).toEqual([]);
    const demoRow = parsed.data.find((row) => row.serviceCd === 'demo-image');
    expect(demoRow).toMatchObject({ memberId: 'DEMO0001' });
    expect(Number(demoRow?.transferGiB)).toBeGreaterThanOrEqual(0);
    expect(demoRow?.transferGiB).toMatch(/^\d+\.\d{2}$/);
  });

  test('the screens in English', async ({ page }) => {
    await useLanguage(page, 'en');
    await login(page, ADMIN.email, ADMIN.password);
    await expect(page).toHaveURL(/\/origin\/index$/);
    await page.goto('/dashboard');
    await expect(page).toHaveTitle(/^Dashboard/);
    await expect(page.getByTestId('usage-utc-note')).toContainText('UTC+9');
    await screenshot(page, 'dashboard-en');
    await page.goto('/statistics');
    await expect(page.getByTestId('stats-chart').locator('canvas')).toBeVisible();
    await screenshot(page, 'statistics-en');
    await page.goto('/admin/statistics');
    await expect(page.getByTestId('admin-stats-row').first()).toBeVisible();
    await screenshot(page, 'admin-statistics-en');
    await page.goto('/admin/invoices');
    await expect(page.getByTestId('invoice-row').first()).toBeVisible();
    await screenshot(page, 'admin-invoices-en');
  });

  test('a statistics-only member reaches the dashboard from the menu', async ({ page }) => {
    await login(page, STATS_USER.email, STATS_USER.password);
    await expect(page).toHaveURL(/\/statistics$/);
    await expect(page.getByTestId('nav-dashboard')).toBeVisible();
    await expect(page.getByTestId('usage-requests')).toHaveText('0');
    await expect(page.getByTestId('stats-empty')).toBeVisible();
    await page.getByTestId('nav-dashboard').click();
    await expect(page).toHaveURL(/\/dashboard$/);
    await expect(page.getByTestId('usage-panel')).toBeVisible();
  });
});
