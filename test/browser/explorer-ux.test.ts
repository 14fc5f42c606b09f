// What a new user tripped on in the explorer (issue 29), each checked in a real browser (Debian's
// chromium via playwright-core) against a real listening server on the sim adapter: the default
// symbol, the crosshair legend, the up/down colours, one XD marker per bar, a failed symbol, the key
// box, range buttons, older history by scrolling left, CJK fonts and the layout on a desktop and a
// phone. Screenshots land in test/browser/artifacts/ (docs/img/explorer.png is the README's).
import { copyFileSync, mkdirSync } from 'node:fs';
import type { Browser, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ARTIFACTS, CASE_MS, DOCS_IMG, WAIT, apiGet as get, enterKey, hookOf, horizontalOverflow, openPage as open, pick, price,
  waitForChart, waitForHook, type Hook, type OpenedPage,
} from './page.ts';
import { BROWSER_KEYS, launchChromium, startLiveServer, type LiveServer } from './server.ts';

// Browser globals inside page.evaluate callbacks (the project compiles without the DOM lib).
declare const window: { __explorer: Hook & { probe: { xOf(i: number): number | null; yOf(p: number): number | null; visibleRange(): { from: number; to: number } | null } } };
declare const document: any;
declare const localStorage: { getItem(key: string): string | null };

const DESKTOP = { width: 1400, height: 900 };
const PHONE = { width: 390, height: 844 };
const RED = [229, 56, 59];
const GREEN = [26, 158, 111];
const DAY = 86_400_000;

let server: LiveServer;
let browser: Browser;

beforeAll(async () => {
  server = await startLiveServer();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const apiGet = (path: string, key = BROWSER_KEYS.demo) => get(server, path, key);
const openPage = (path = '/explorer', viewport = DESKTOP) => open(browser, server, path, viewport);

async function withPage(viewport: { width: number; height: number }, run: (opened: OpenedPage) => Promise<void>): Promise<void> {
  const opened = await openPage('/explorer', viewport);
  try {
    await run(opened);
    expect(opened.problems).toEqual([]);
  } finally {
    await opened.context.close();
  }
}

/** The exchange's calendar date of an instant ("2025-06-18"). */
const dateIn = (zone: string, ms: number) => new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(ms);
const shortVolume = (v: number) => (v >= 1e9 ? `${(v / 1e9).toFixed(2)}B` : v >= 1e6 ? `${(v / 1e6).toFixed(2)}M` : v >= 1e4 ? `${(v / 1e3).toFixed(1)}K` : v.toLocaleString('en-US'));
const pct = (fraction: number) => `${fraction > 0 ? '+' : ''}${(fraction * 100).toFixed(2)}%`;

/** What the legend must say for bar `i` of a columnar answer. */
function legendFor(d: any, i: number, zone: string) {
  return {
    time: dateIn(zone, d.timestamp[i]),
    timestamp: d.timestamp[i],
    open: price(d.open[i]),
    high: price(d.high[i]),
    low: price(d.low[i]),
    close: price(d.close[i]),
    volume: shortVolume(d.volume[i]),
    change: pct(d.close[i] / d.prev_close[i] - 1),
  };
}

async function legendText(page: Page) {
  const text = async (id: string) => (await page.textContent(`#legend-${id}`)) ?? '';
  return {
    time: await text('time'), open: await text('open'), high: await text('high'), low: await text('low'),
    close: await text('close'), volume: await text('volume'), change: await text('change'),
  };
}

/** The colour drawn at a point of the price chart (CSS px inside #price-chart), from the chart's own canvases. */
async function pixelAt(page: Page, x: number, y: number): Promise<number[] | null> {
  return page.evaluate(([px, py]) => {
    const host = document.getElementById('price-chart');
    const rect = host.getBoundingClientRect();
    const X = rect.left + px;
    const Y = rect.top + py;
    for (const canvas of host.querySelectorAll('canvas')) {
      const r = canvas.getBoundingClientRect();
      if (X < r.left || X >= r.right || Y < r.top || Y >= r.bottom) continue;
      const pixel = canvas.getContext('2d').getImageData(Math.floor((X - r.left) * canvas.width / r.width), Math.floor((Y - r.top) * canvas.height / r.height), 1, 1).data;
      if (pixel[3] === 255) return [pixel[0], pixel[1], pixel[2]];
    }
    return null;
  }, [x, y]);
}

/** The body colour of candle `i` (the middle of its body). */
async function candleColour(page: Page, i: number, open: number, close: number): Promise<number[] | null> {
  const [x, y] = await page.evaluate(([index, mid]) => [window.__explorer.probe.xOf(index), window.__explorer.probe.yOf(mid)], [i, (open + close) / 2]);
  return pixelAt(page, x!, y!);
}

const klinesRequests = (page: Page, sink: URL[]) => page.on('request', (r) => {
  const url = new URL(r.url());
  if (url.pathname === '/v1/klines') sink.push(url);
});

/** Drag the price chart to the right by `dx` (reveals older bars). */
async function dragRight(page: Page, dx: number): Promise<void> {
  const box = (await page.locator('#price-chart').boundingBox())!;
  const y = box.y + 140;
  await page.mouse.move(box.x + 150, y);
  await page.mouse.down();
  for (let step = 1; step <= 10; step += 1) await page.mouse.move(box.x + 150 + (dx * step) / 10, y);
  await page.mouse.up();
}

function expectedMarkers(timestamps: number[], events: { timestamp: number; ex_factor: number }[]): string[] {
  const groups = new Map<number, number[]>();
  const inRange = events.filter((e) => e.timestamp >= timestamps[0] && e.timestamp <= timestamps.at(-1)!).sort((a, b) => a.timestamp - b.timestamp);
  for (const event of inRange) {
    const index = timestamps.findIndex((ts) => ts >= event.timestamp);
    groups.set(index, [...(groups.get(index) ?? []), event.ex_factor]);
  }
  return [...groups.entries()].sort((a, b) => a[0] - b[0]).map(([, factors]) => {
    const factor = factors.reduce((p, f) => p * f, 1);
    return factors.length === 1 ? `XD ×${factor.toFixed(4)}` : `XD ×${factor.toFixed(4)} (${factors.length} events)`;
  });
}

describe('the explorer, as a new user meets it', () => {
  it('shows 600519.SH after "Use key" without typing, with a legend for the newest bar and for the bar under the cursor', async () => {
    await withPage(DESKTOP, async ({ page }) => {
      await enterKey(page, BROWSER_KEYS.demo);
      await waitForChart(page, '600519.SH', '1d', 'forward');
      expect(await page.inputValue('#symbol')).toBe('600519.SH');
      const d = (await apiGet('/v1/klines?symbol=600519.SH&period=1d&adjust=forward&count=300')).body.data;
      const last = d.close.length - 1;
      expect((await hookOf(page)).chart!.closes).toEqual(d.close);

      // The cursor is away: the newest bar.
      await waitForHook(page, 'hook.legend !== null');
      expect((await hookOf(page)).legend).toMatchObject({ ...legendFor(d, last, 'Asia/Shanghai'), hovered: false });
      const { timestamp: _t, ...newestText } = legendFor(d, last, 'Asia/Shanghai');
      expect(await legendText(page)).toEqual(newestText);
      expect(await page.isVisible('#legend')).toBe(true);

      // Under the cursor: follows the crosshair bar by bar.
      const box = (await page.locator('#price-chart').boundingBox())!;
      for (const i of [120, 250, 37]) {
        const x = await page.evaluate((index) => window.__explorer.probe.xOf(index), i);
        await page.mouse.move(box.x + x!, box.y + 160);
        await page.waitForFunction((ts) => window.__explorer.legend?.timestamp === ts && window.__explorer.legend.hovered, d.timestamp[i], WAIT);
        const { timestamp: _ts, ...text } = legendFor(d, i, 'Asia/Shanghai');
        expect(await legendText(page)).toEqual(text);
      }
      // A bar with an ex-dividend event names it in the legend too.
      const { markers, markerIndexes } = await hookOf(page);
      expect(markers.length).toBeGreaterThan(0);
      const xdBar = markerIndexes.at(-1)!;
      const xdX = await page.evaluate((index) => window.__explorer.probe.xOf(index), xdBar);
      await page.mouse.move(box.x + xdX!, box.y + 160);
      await page.waitForFunction((ts) => window.__explorer.legend?.timestamp === ts, d.timestamp[xdBar], WAIT);
      expect(await page.textContent('#legend-xd')).toBe(markers.at(-1));
      expect(await page.isVisible('#legend-xd')).toBe(true);
      await page.screenshot({ path: `${ARTIFACTS}legend-hover.png` });

      // The cursor leaves the chart: back to the newest bar.
      await page.mouse.move(5, 5);
      await page.waitForFunction((ts) => window.__explorer.legend?.timestamp === ts && !window.__explorer.legend.hovered, d.timestamp[last], WAIT);
      expect(await legendText(page)).toEqual(newestText);
    });
  }, CASE_MS);

  it('colours up and down by the market (CN, HK red up; US green up), and keeps the setting in localStorage', async () => {
    await withPage(DESKTOP, async ({ page }) => {
      await enterKey(page, BROWSER_KEYS.demo);
      await waitForChart(page, '600519.SH', '1d', 'forward');
      const colourOf = (rgb: number[] | null) => (rgb === null ? 'none' : rgb.join() === RED.join() ? 'red' : rgb.join() === GREEN.join() ? 'green' : rgb.join());
      /** The drawn colour of the newest clearly rising and clearly falling candles. */
      async function drawn(symbol: string): Promise<{ up: string; down: string }> {
        const d = (await apiGet(`/v1/klines?symbol=${symbol}&period=1d&adjust=forward&count=300`)).body.data;
        await page.mouse.move(5, 5);
        const pickBar = (rising: boolean) => {
          for (let i = d.close.length - 2; i > 0; i -= 1) {
            const move = (d.close[i] - d.open[i]) / d.open[i];
            if (rising ? move > 0.01 : move < -0.01) return i;
          }
          throw new Error('no such bar');
        };
        const up = pickBar(true);
        const down = pickBar(false);
        return {
          up: colourOf(await candleColour(page, up, d.open[up], d.close[up])),
          down: colourOf(await candleColour(page, down, d.open[down], d.close[down])),
        };
      }
      const cssColour = (selector: string) => page.evaluate((sel) => getComputedStyle(document.querySelector(sel)).color, selector);
      const rgb = (c: number[]) => `rgb(${c.join(', ')})`;

      // Auto on a CN symbol: red up, green down, in the candles, the hook and the page's CSS.
      expect((await hookOf(page)).colours).toMatchObject({ mode: 'auto', scheme: 'red-up', up: '#e5383b', down: '#1a9e6f' });
      expect(await drawn('600519.SH')).toEqual({ up: 'red', down: 'green' });
      expect(await page.getAttribute('body', 'data-colours')).toBe('red-up');
      await page.waitForFunction(() => window.__explorer.quote !== null, undefined, WAIT);
      const change = (await hookOf(page)).quote!.ext.change_amount;
      expect(change).not.toBe(0);
      expect(await cssColour('#quote-change')).toBe(change > 0 ? 'rgb(214, 47, 50)' : 'rgb(20, 135, 94)');
      await page.screenshot({ path: `${ARTIFACTS}colours-cn-auto.png` });

      // Auto on a US symbol: green up.
      await pick(page, 'AAPL.US');
      await waitForChart(page, 'AAPL.US', '1d', 'forward');
      expect((await hookOf(page)).colours).toMatchObject({ mode: 'auto', scheme: 'green-up' });
      expect(await drawn('AAPL.US')).toEqual({ up: 'green', down: 'red' });
      expect(await page.getAttribute('body', 'data-colours')).toBe('green-up');
      await page.screenshot({ path: `${ARTIFACTS}colours-us-auto.png` });

      // The user's setting wins over the market's and is kept.
      await page.selectOption('#colours', 'red-up');
      expect(await drawn('AAPL.US')).toEqual({ up: 'red', down: 'green' });
      expect(await page.evaluate(() => localStorage.getItem('mdqs.explorer.colours'))).toBe('red-up');
      await page.selectOption('#colours', 'green-up');
      await page.reload();
      // After a reload (the key is still in this tab) the default CN symbol comes back in green-up.
      await waitForChart(page, '600519.SH', '1d', 'forward');
      expect(await page.inputValue('#colours')).toBe('green-up');
      expect((await hookOf(page)).colours).toMatchObject({ mode: 'green-up', scheme: 'green-up' });
      expect(await drawn('600519.SH')).toEqual({ up: 'green', down: 'red' });
      expect(rgb(GREEN)).toBe('rgb(26, 158, 111)');
      // Back to the market's own: nothing stored.
      await page.selectOption('#colours', 'auto');
      expect(await page.evaluate(() => localStorage.getItem('mdqs.explorer.colours'))).toBeNull();
      expect(await drawn('600519.SH')).toEqual({ up: 'red', down: 'green' });
    });
  }, CASE_MS);

  it('puts one XD marker per bar on weekly, monthly and yearly charts: events in one bar merge', async () => {
    await withPage(DESKTOP, async ({ page }) => {
      await enterKey(page, BROWSER_KEYS.demo);
      await waitForChart(page, '600519.SH', '1d', 'forward');
      await pick(page, 'AAPL.US');
      await waitForChart(page, 'AAPL.US', '1d', 'forward');
      const events = (await apiGet('/v1/klines/ex-factors?symbols=AAPL.US')).body.data['AAPL.US'];
      let merged = 0;
      for (const period of ['1w', '1M', '1Q', '1Y']) {
        await page.selectOption('#period', period);
        await waitForChart(page, 'AAPL.US', period, 'forward');
        const d = (await apiGet(`/v1/klines?symbol=AAPL.US&period=${period}&adjust=forward&count=300`)).body.data;
        const hook = await hookOf(page);
        expect(hook.chart!.timestamps, period).toEqual(d.timestamp);
        const expected = expectedMarkers(d.timestamp, events);
        expect(hook.markers, period).toEqual(expected);
        // Never two markers on one bar.
        expect(new Set(hook.markerTimes).size, period).toBe(hook.markerTimes.length);
        merged += expected.filter((text) => text.includes('events')).length;
        if (period === '1Q') await page.screenshot({ path: `${ARTIFACTS}xd-quarterly.png` });
      }
      // The quarterly and yearly charts do hold bars with several events (merged into one marker each).
      expect(merged).toBeGreaterThan(10);
    });
  }, CASE_MS);

  it('a failed symbol blanks the chart (data, axes, title, legend) and says what happened in plain words', async () => {
    await withPage(DESKTOP, async ({ page }) => {
      await enterKey(page, BROWSER_KEYS.demo);
      await waitForChart(page, '600519.SH', '1d', 'forward');
      expect(await page.isVisible('#price-chart')).toBe(true);
      const jargon = ['X-Missing-Symbols', 'X-Failed-Symbols', 'INVALID_SYMBOL', 'SYMBOL_NOT_FOUND', 'UPSTREAM_UNAVAILABLE'];

      async function expectBlank(symbol: string, status: string, tag: RegExp): Promise<void> {
        await page.waitForFunction((s) => window.__explorer.chart?.symbol === s && window.__explorer.chart.count === 0, symbol, WAIT);
        expect(await page.textContent('#status')).toBe(status);
        expect(await page.getAttribute('#status', 'title')).toMatch(tag);
        expect(await page.textContent('#chart-title')).toBe('Candles');
        // The chart (series, price and time axes, markers) is not drawn at all; a sentence stands in its place.
        expect(await page.isVisible('#price-chart')).toBe(false);
        expect(await page.isVisible('#legend')).toBe(false);
        expect(await page.textContent('#price-empty')).toBe(`No chart for ${symbol}.`);
        expect(await page.isVisible('#price-empty')).toBe(true);
        expect((await hookOf(page)).markers).toEqual([]);
        const text = await page.innerText('body');
        for (const word of jargon) expect(text, word).not.toContain(word);
        expect(text).not.toMatch(/\b[45]\d\d [A-Z_]{4,}/); // no "400 INVALID_…" status-and-reason tags
      }

      await pick(page, '600000.XX');
      await expectBlank('600000.XX', '600000.XX: unknown symbol. Codes look like 600519.SH, 00700.HK or AAPL.US.', /^400 INVALID_SYMBOL · request /);
      // Nothing of 600519.SH stays on the page (its name was in the title and the quote panel).
      expect(await page.innerText('body')).not.toContain('贵州茅台');
      // Nothing else repeats it, and no live updates start for a symbol that does not exist.
      expect(await page.textContent('#quote-error')).toBe('');
      expect(await page.textContent('#intraday-error')).toBe('No intraday line for 600000.XX.');
      expect((await hookOf(page)).live).toBe('off');
      await page.screenshot({ path: `${ARTIFACTS}failed-symbol.png` });

      await pick(page, '999999.SH');
      await expectBlank('999999.SH', '999999.SH: unknown symbol', /^404 SYMBOL_NOT_FOUND · request /);

      // The vendor fails: said as such, and the next try draws the chart again.
      await page.route((url) => url.pathname === '/v1/klines', (route) => route.fulfill({
        status: 503,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: 503, message: 'the upstream vendor is unavailable', error: 'UPSTREAM_UNAVAILABLE', request_id: 'r9' }),
      }));
      await pick(page, '600519.SH');
      await expectBlank('600519.SH', '600519.SH: vendor unavailable, try again', /^503 UPSTREAM_UNAVAILABLE · request r9$/);
      await page.unroute((url) => url.pathname === '/v1/klines');
      await page.unrouteAll();
      await page.click('#symbol-go');
      await waitForChart(page, '600519.SH', '1d', 'forward');
      expect(await page.isVisible('#price-chart')).toBe(true);
      expect(await page.textContent('#status')).toBe('');
      expect((await hookOf(page)).chart!.count).toBe(300);
    });
  }, CASE_MS);

  it('says "key rejected" beside the key box for a wrong key, and shows what the plan allows from /v1/me', async () => {
    // A wrong key, against the real server (with or without /v1/me).
    await withPage(DESKTOP, async ({ page }) => {
      await enterKey(page, 'wrong-key');
      await page.waitForFunction(() => window.__explorer.keyState === 'rejected', undefined, WAIT);
      expect(await page.textContent('#key-state')).toBe('key rejected (401)');
      expect(await page.getAttribute('#key-state', 'class')).toContain('rejected');
      await page.waitForFunction(() => window.__explorer.chart !== null, undefined, WAIT);
      expect(await page.textContent('#key-state')).toBe('key rejected (401)');
      expect(await page.textContent('#key-plan')).toBe('');
      expect(await page.innerText('body')).not.toContain('key in use');
      await page.screenshot({ path: `${ARTIFACTS}key-rejected.png` });
    });

    // /v1/me in the documented shape (mocked in the browser: the route is another agent's).
    const me = {
      key_id: 'demo', anonymous: false, plan: 'demo', markets: ['HK', 'US'], features: ['quotes', 'depth', 'klines_daily', 'klines_minute', 'ex_factors'],
      max_symbols: 100, max_bars: 500000,
      rate_limit: { limit: 100000, window_ms: 60000, remaining: 12345, reset_at: Date.UTC(2025, 5, 18, 2, 16), shared: false },
      stream: { max_connections: 10, max_subscriptions: 200 }, expires_at: null,
    };
    await withPage(DESKTOP, async ({ page, requests }) => {
      await page.route((url) => url.pathname === '/v1/me', (route) => route.fulfill({
        status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data: me }),
      }));
      await enterKey(page, BROWSER_KEYS.demo);
      // The default symbol follows the plan's first market.
      await waitForChart(page, '00700.HK', '1d', 'forward');
      expect(await page.inputValue('#symbol')).toBe('00700.HK');
      expect(await page.textContent('#key-state')).toBe('key accepted (kept in this tab only)');
      const line = (await page.textContent('#key-plan'))!;
      expect(line).toMatch(/^Plan demo · HK, US markets · up to 100 symbols a call · [\d,]+ of 100,000 calls left this minute$/);
      // "calls left" follows the responses after /v1/me (the server counts every call of this key).
      const remaining = Number(line.match(/([\d,]+) of 100,000/)![1].replaceAll(',', ''));
      expect(remaining).not.toBe(12345);
      expect(remaining).toBeGreaterThan(99_000);
      expect(await page.getAttribute('#key-plan', 'title')).toBe(
        'Data: quotes, depth, klines daily, klines minute, ex factors\nUp to 500,000 bars a request\nLive stream: 10 connections, 200 subscriptions\nKey id: demo');
      const call = requests.find((r) => new URL(r.url()).pathname === '/v1/me');
      expect(call?.headers()['x-api-key']).toBe(BROWSER_KEYS.demo);
      await page.screenshot({ path: `${ARTIFACTS}key-plan.png`, clip: { x: 0, y: 0, width: 1400, height: 160 } });
    });

    // No /v1/me yet (404): nothing is shown about the plan, nothing goes wrong.
    await withPage(DESKTOP, async ({ page }) => {
      await page.route((url) => url.pathname === '/v1/me', (route) => route.fulfill({
        status: 404, headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: 404, message: 'no route GET /v1/me', error: 'NOT_FOUND', request_id: 'r4' }),
      }));
      await enterKey(page, BROWSER_KEYS.demo);
      await waitForChart(page, '600519.SH', '1d', 'forward');
      expect(await page.textContent('#key-plan')).toBe('');
      expect(await page.isVisible('#key-plan')).toBe(false);
      expect(await page.textContent('#status')).toBe('');
      expect(await page.textContent('#key-state')).toBe('key accepted (kept in this tab only)');
    });
  }, CASE_MS);
});

