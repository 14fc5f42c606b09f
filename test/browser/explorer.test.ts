// The explorer and /docs in a real browser (Debian's chromium via playwright-core) against a real
// listening server on the sim adapter, with the server's clock inside the CN morning session.
import type { Page, Request } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ARTIFACTS, CASE_MS, WAIT, browserSuite, enterKey, hookOf, pick, price, waitForChart, type Hook } from './page.ts';
import { BROWSER_KEYS } from './server.ts';

// Browser globals inside page.evaluate callbacks (the project compiles without the DOM lib).
declare const window: { __explorer: Hook };
declare const document: { getElementById(id: string): { textContent: string | null } | null };

const live = browserSuite();
const { apiGet, openPage } = live;

/** The chart holds exactly the candles the API returns for the same query. */
async function expectChartMatchesApi(page: Page, symbol: string, period: string, adjust: string): Promise<void> {
  await waitForChart(page, symbol, period, adjust);
  const { chart } = await hookOf(page);
  const api = await apiGet(`/v1/klines?symbol=${symbol}&period=${period}&adjust=${adjust}&count=300`);
  expect(api.status).toBe(200);
  expect(chart!.count).toBe(api.body.data.close.length);
  expect(chart!.lastClose).toBe(api.body.data.close.at(-1));
  expect(chart!.closes).toEqual(api.body.data.close);
}

function expectOnlyOwnOrigin(requests: Request[], key: string): void {
  expect(requests.length).toBeGreaterThan(5);
  for (const request of requests) {
    expect(new URL(request.url()).origin, request.url()).toBe(live.server.base);
    expect(request.url()).not.toContain(key);
  }
}

describe('the explorer', () => {
  it('shows 600519.SH: chart, ex-dividend markers, quote, depth, intraday and a live update', async () => {
    const { context, page, requests, problems } = await openPage('/explorer');
    try {
      // The server flags its demo key: the page opens on it (test/browser/explorer-first-visit.test.ts);
      // a key entered by hand takes over.
      await page.waitForFunction(() => (window as unknown as { __explorer: { access?: string } }).__explorer.access === 'demo', undefined, WAIT);
      await enterKey(page, BROWSER_KEYS.demo);
      await page.waitForFunction(() => /\d+ symbols in \d+ pools/.test(document.getElementById('search-state')!.textContent ?? ''), undefined, WAIT);
      expect(await page.evaluate(() => sessionStorage.getItem('mdqs.explorer.apiKey'))).toBe(BROWSER_KEYS.demo);
      // localStorage holds at most the colour setting, never the key.
      const stored = await page.evaluate(() => Object.entries(localStorage).map(([k, v]) => `${k}=${v}`).join('\n'));
      expect(stored).not.toContain(BROWSER_KEYS.demo);

      await pick(page, '600519.SH');
      await expectChartMatchesApi(page, '600519.SH', '1d', 'forward');

      // Ex-dividend markers: one per API event inside the candles' range.
      const klines = await apiGet('/v1/klines?symbol=600519.SH&period=1d&adjust=forward&count=300');
      const factors = await apiGet('/v1/klines/ex-factors?symbols=600519.SH');
      const [first, last] = [klines.body.data.timestamp[0], klines.body.data.timestamp.at(-1)];
      const inRange = (factors.body.data['600519.SH'] as { timestamp: number; ex_factor: number }[])
        .filter((e) => e.timestamp >= first && e.timestamp <= last);
      expect(inRange.length).toBeGreaterThan(0);
      expect((await hookOf(page)).markers).toEqual(inRange.map((e) => `XD ×${e.ex_factor.toFixed(4)}`));

      // Quote panel and depth ladder against the API at the same instant.
      await page.waitForFunction(() => {
        const hook = (window as unknown as { __explorer: Hook }).__explorer;
        return hook.quote !== null && hook.depth !== null && hook.intraday !== null;
      }, undefined, WAIT);
      const quote = (await apiGet('/v1/quotes?symbols=600519.SH')).body.data[0];
      expect(await page.textContent('#quote-last')).toBe(price(quote.last_price));
      expect(await page.textContent('#quote-change')).toBe(`${quote.ext.change_amount > 0 ? '+' : ''}${quote.ext.change_amount.toFixed(2)}`);
      expect(await page.textContent('#quote-change-pct')).toBe(`${quote.ext.change_pct > 0 ? '+' : ''}${(quote.ext.change_pct * 100).toFixed(2)}%`);
      expect(await page.textContent('#quote-session')).toBe('open (regular session)');
      expect(await page.textContent('#quote-time')).toBe('2025-06-18 10:15:30 Asia/Shanghai');
      const depth = (await apiGet('/v1/depth?symbol=600519.SH')).body.data;
      for (const side of ['bid', 'ask'] as const) {
        const prices: number[] = depth[`${side}_prices`];
        const volumes: number[] = depth[`${side}_volumes`];
        expect(prices.length).toBe(5);
        for (let level = 1; level <= 5; level += 1) {
          const row = page.locator(`#depth-rows tr[data-side="${side}"][data-level="${level}"]`);
          expect(await row.locator('td.price').textContent()).toBe(price(prices[level - 1]));
          expect(await row.locator('td.volume').textContent()).toBe(volumes[level - 1].toLocaleString('en-US'));
        }
      }
      const intraday = (await apiGet('/v1/klines/intraday?symbol=600519.SH')).body.data;
      expect((await hookOf(page)).intraday).toMatchObject({ count: intraday.close.length, lastClose: intraday.close.at(-1) });

      // The source badge: X-Upstream, and simulated on sim.
      expect(await page.getAttribute('#source-badge', 'data-upstream')).toBe('sim');
      expect(await page.textContent('#source-badge')).toContain('SIMULATED');

      // Switching period and adjust reloads exactly what the API returns.
      await page.selectOption('#period', '1w');
      await expectChartMatchesApi(page, '600519.SH', '1w', 'forward');
      await page.selectOption('#adjust', 'backward');
      await expectChartMatchesApi(page, '600519.SH', '1w', 'backward');
      await page.selectOption('#period', '5m');
      await expectChartMatchesApi(page, '600519.SH', '5m', 'backward');
      await page.selectOption('#period', '1d');
      await page.selectOption('#adjust', 'forward');
      await expectChartMatchesApi(page, '600519.SH', '1d', 'forward');

      // One live update: the server's clock moves a minute on; the stream pushes the new quote
      // (the key went as a WebSocket subprotocol, never in a URL), and the footer says so.
      expect((await hookOf(page)).transport).toBe('stream');
      expect(await page.textContent('#live-state')).toBe('Live updates: pushed over the WebSocket stream (/v1/ws/stream) as the market moves.');
      expect(await page.textContent('footer')).not.toContain('polling');
      const before = (await hookOf(page)).quote!.timestamp;
      live.server.clock.now += 60_000;
      await page.waitForFunction((t) => {
        const hook = (window as unknown as { __explorer: Hook }).__explorer;
        return hook.quote !== null && hook.quote.timestamp > t && hook.liveUpdates >= 1;
      }, before, WAIT);
      const moved = (await apiGet('/v1/quotes?symbols=600519.SH')).body.data[0];
      expect((await hookOf(page)).quote!.timestamp).toBe(moved.timestamp);
      expect(moved.timestamp).toBeGreaterThan(before);
      expect(await page.textContent('#quote-last')).toBe(price(moved.last_price));
      expect(await page.textContent('#quote-time')).toBe('2025-06-18 10:16:30 Asia/Shanghai');

      await page.screenshot({ path: `${ARTIFACTS}explorer-600519.png`, fullPage: true });
      expectOnlyOwnOrigin(requests, BROWSER_KEYS.demo);
      // Every /v1 call carried the key in the header.
      for (const request of requests.filter((r) => new URL(r.url()).pathname.startsWith('/v1/') && !r.url().endsWith('/v1/meta'))) {
        expect(request.headers()['x-api-key'], request.url()).toBe(BROWSER_KEYS.demo);
      }
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, CASE_MS);

  it('a key without the HK market picks 00700.HK and is told in words', async () => {
    const { context, page, requests, problems } = await openPage('/explorer');
    try {
      await enterKey(page, BROWSER_KEYS.noHk);
      await waitForChart(page, '600519.SH', '1d', 'forward');
      await pick(page, '00700.HK');
      await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '') !== '', undefined, WAIT);
      await expect(page.textContent('#status')).resolves.toBe('Your plan (cn_us) does not include the HK market (00700.HK).');
      expect(await page.getAttribute('#status', 'title')).toMatch(/^403 MARKET_NOT_PERMITTED · request /);
      // The quote meets the same refusal; it is said once, at the top, not again in the quote panel.
      await page.waitForFunction(() => (window as unknown as { __explorer: { quoteError?: string } }).__explorer.quoteError === 'MARKET_NOT_PERMITTED', undefined, WAIT);
      expect(await page.textContent('#quote-error')).toBe('');
      expect((await hookOf(page)).chart).toMatchObject({ symbol: '00700.HK', count: 0, error: 'MARKET_NOT_PERMITTED' });
      await page.screenshot({ path: `${ARTIFACTS}explorer-403.png` });
      expectOnlyOwnOrigin(requests, BROWSER_KEYS.noHk);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, CASE_MS);

  it('says every other error in words: 401, 429 (waits and retries), 5xx, X-Failed-Symbols', async () => {
    const { context, page, requests, problems } = await openPage('/explorer');
    try {
      await enterKey(page, 'wrong-key');
      await pick(page, '600519.SH');
      await page.waitForFunction(() => (document.getElementById('status')?.textContent ?? '') !== '', undefined, WAIT);
      expect(await page.textContent('#status')).toBe('Key rejected: this API key is not valid. Enter a valid key above.');
      // The symbol list met the same 401: said once, at the top.
      expect(await page.textContent('#search-state')).not.toContain('Key rejected');
      expect(await page.textContent('#key-state')).toBe('key rejected (401)');

      // The stream is refused (closed at once): the page falls back to polling, where the
      // upstream misbehaves (replayed in the browser, the server is healthy): the first candles
      // call is rate limited, depth is unavailable, ex-factors report a failed symbol.
      await page.routeWebSocket(/\/v1\/ws\/stream/, (ws) => ws.close());
      let klinesCalls = 0;
      await page.route((url) => url.pathname === '/v1/klines', async (route) => {
        klinesCalls += 1;
        if (klinesCalls > 1) return route.continue();
        return route.fulfill({
          status: 429,
          headers: { 'content-type': 'application/json', 'retry-after': '2' },
          body: JSON.stringify({ code: 429, message: 'rate limit of 3 requests exceeded', error: 'RATE_LIMITED', request_id: 'r1', retry_after_ms: 1500 }),
        });
      });
      await page.route((url) => url.pathname === '/v1/depth', (route) => route.fulfill({
        status: 503,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: 503, message: 'the upstream vendor is unavailable', error: 'UPSTREAM_UNAVAILABLE', request_id: 'r2' }),
      }));
      await page.route((url) => url.pathname === '/v1/klines/ex-factors', (route) => route.fulfill({
        status: 200,
        headers: { 'content-type': 'application/json', 'x-upstream': 'sim', 'x-failed-symbols': '600519.SH' },
        body: JSON.stringify({ data: {} }),
      }));

      await enterKey(page, BROWSER_KEYS.demo);
      await page.waitForFunction(() => (document.getElementById('notice-rate')?.textContent ?? '').startsWith('Too many requests'), undefined, WAIT);
      expect(await page.textContent('#notice-rate')).toBe('Too many requests: waiting 1.5 s as the server asks, then retrying.');
      await expectChartMatchesApi(page, '600519.SH', '1d', 'forward');
      expect(klinesCalls).toBe(2);
      await page.waitForFunction(() => (document.getElementById('notice-rate')?.textContent ?? 'x') === '', undefined, WAIT);

      await page.waitForFunction(() => (document.getElementById('depth-error')?.textContent ?? '') !== '', undefined, WAIT);
      expect(await page.textContent('#depth-error')).toBe('600519.SH: vendor unavailable, try again');
      expect(await page.textContent('#notice-failed')).toBe('600519.SH: vendor unavailable for the ex-dividend markers, try again.');
      expect((await hookOf(page)).transport).toBe('polling');
      // The footer tells the truth: the stream was refused, so the page polls.
      expect(await page.textContent('#live-state')).toBe('Live updates: the WebSocket stream is unavailable, so the page asks /v1/quotes and /v1/depth every 2 s while the market is open.');
      // No header names or reason codes in what a trader reads.
      const text = await page.innerText('body');
      for (const jargon of ['X-Failed-Symbols', 'X-Missing-Symbols', 'UPSTREAM_UNAVAILABLE', 'RATE_LIMITED', 'INVALID_API_KEY']) expect(text).not.toContain(jargon);
      expect((await hookOf(page)).markers).toEqual([]);
      expectOnlyOwnOrigin(requests, 'wrong-key');
      expectOnlyOwnOrigin(requests, BROWSER_KEYS.demo);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, CASE_MS);
});

describe('/docs', () => {
  it('shows the demo key, and "Try it out" on GET /v1/quotes answers 200', async () => {
    const { context, page, requests, problems } = await openPage('/docs');
    try {
      await page.getByText('Demo key (local use only)').waitFor(WAIT);
      expect(await page.locator('.info').textContent()).toContain('demo-key');

      const block = page.locator('.opblock-get', { has: page.locator('.opblock-summary-path[data-path="/v1/quotes"]') });
      await block.locator('.opblock-summary').click();
      await block.locator('button.try-out__btn').click();
      const symbols = block.locator('tr[data-param-name="symbols"] input');
      await expect(symbols.inputValue()).resolves.toBe('600519.SH,00700.HK,AAPL.US');
      await block.locator('button.execute').click();
      const status = block.locator('.live-responses-table .response .response-col_status').first();
      await status.waitFor(WAIT);
      expect((await status.textContent())?.trim()).toBe('200');

      const call = requests.find((r) => new URL(r.url()).pathname === '/v1/quotes');
      expect(call?.headers()['x-api-key']).toBe('demo-key');
      expect(call?.url()).not.toContain('demo-key');
      await page.screenshot({ path: `${ARTIFACTS}docs-try-it-out.png` });
      for (const request of requests) expect(new URL(request.url()).origin).toBe(live.server.base);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, CASE_MS);
});
