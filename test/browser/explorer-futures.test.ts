// The explorer on a China futures contract: the chart holds the API's candles, and the open
// interest is drawn under them (a line over the volume pane); an equity has no such line.
import { describe, expect, it } from 'vitest';
import { CASE_MS, WAIT, browserSuite, enterKey, hookOf, pick, waitForChart, type Hook } from './page.ts';
import { BROWSER_KEYS } from './server.ts';

declare const window: { __explorer: Hook };

const live = browserSuite();

describe('the explorer on a futures contract', () => {
  it('au2604.SHF: candles as the API has them, and the open interest line under them', async () => {
    const { context, page, problems } = await live.openPage('/explorer');
    try {
      await page.waitForFunction(() => (window as unknown as { __explorer: { access?: string } }).__explorer.access === 'demo', undefined, WAIT);
      await enterKey(page, BROWSER_KEYS.demo);
      await pick(page, 'au2604.SHF');
      const adjust = (await hookOf(page)).chart?.adjust ?? 'forward';
      await waitForChart(page, 'au2604.SHF', '1d', adjust);
      const { chart } = await hookOf(page);
      const api = await live.apiGet(`/v1/klines?symbol=au2604.SHF&period=1d&adjust=${adjust}&count=300`);
      expect(api.status).toBe(200);
      expect(chart!.closes).toEqual(api.body.data.close);
      expect(api.body.data.open_interest.length).toBeGreaterThan(20);
      expect(chart!.openInterest).toEqual(api.body.data.open_interest);

      await pick(page, '600519.SH');
      await waitForChart(page, '600519.SH', '1d', adjust);
      expect((await hookOf(page)).chart!.openInterest).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, CASE_MS);
});
