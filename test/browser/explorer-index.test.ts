// The explorer on an index, in a real browser against a real server on the sim (CN morning
// session): 000001.SH shows the SSE Composite's chart and quote; its depth panel says in words that
// an index has no order book, the quotes keep streaming, and the page neither falls back to polling
// nor asks /v1/depth again and again.
import { describe, expect, it } from 'vitest';
import { CASE_MS, WAIT, browserSuite, enterKey, hookOf, pick, price, waitForChart, type Hook } from './page.ts';
import { BROWSER_KEYS } from './server.ts';

declare const window: { __explorer: Hook & { depthError?: string | null } };
declare const document: { getElementById(id: string): { textContent: string | null } | null };

const live = browserSuite();
const { apiGet, openPage } = live;

describe('the explorer on an index', () => {
  it('000001.SH: chart and quote of 上证指数, depth refused in words, quotes still streamed', async () => {
    const { context, page, requests, problems } = await openPage('/explorer');
    try {
      await enterKey(page, BROWSER_KEYS.demo);
      await page.waitForFunction(() => /\d+ symbols in \d+ pools/.test(document.getElementById('search-state')!.textContent ?? ''), undefined, WAIT);
      await pick(page, '000001.SH');
      await waitForChart(page, '000001.SH', '1d', 'forward');
      const api = await apiGet('/v1/klines?symbol=000001.SH&period=1d&adjust=forward&count=300');
      expect((await hookOf(page)).chart!.closes).toEqual(api.body.data.close);

      await page.waitForFunction(() => window.__explorer.quote !== null && window.__explorer.depthError != null, undefined, WAIT);
      const quote = (await apiGet('/v1/quotes?symbols=000001.SH')).body.data[0];
      expect(quote.ext.name).toBe('上证指数');
      expect(await page.textContent('#quote-last')).toBe(price(quote.last_price));
      expect(await page.evaluate(() => window.__explorer.depthError)).toBe('SYMBOL_NOT_FOUND');
      expect(await page.textContent('#depth-error')).toContain('no order book');
      expect((await hookOf(page)).transport).toBe('stream');

      // A minute on, the stream pushes the index's quote; depth is never polled.
      const before = (await hookOf(page)).quote!.timestamp;
      live.server.clock.now += 60_000;
      await page.waitForFunction((t) => window.__explorer.quote !== null && window.__explorer.quote.timestamp > t, before, WAIT);
      expect(requests.filter((r) => new URL(r.url()).pathname === '/v1/depth')).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, CASE_MS);
});
