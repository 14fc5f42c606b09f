// What a new user tripped on in the explorer (issue 29), each checked in a real browser (Debian's
// chromium via playwright-core) against a real listening server on the sim adapter: the default
// symbol, the crosshair legend, the up/down colours, one XD marker per bar, a failed symbol, the key
// box, range buttons, older history by scrolling left, CJK fonts and the layout on a desktop and a
// phone. Screenshots land in test/browser/artifacts/ (docs/img/explorer.png is docs/explorer.md's).
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import type { Page, Response } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  ARTIFACTS, CASE_MS, DOCS_IMG, WAIT, browserSuite, enterKey, hookOf, horizontalOverflow, pick, price, waitForChart, waitForHook,
  type Hook, type OpenedPage,
} from './page.ts';
import { BROWSER_KEYS } from './server.ts';

// Browser globals inside page.evaluate callbacks (the project compiles without the DOM lib).
declare const window: { __explorer: Hook & { probe: { xOf(i: number): number | null; yOf(p: number): number | null; visibleRange(): { from: number; to: number } | null } } };
declare const document: any;
declare function getComputedStyle(node: unknown): { color: string; fontFamily: string };
declare function requestAnimationFrame(callback: (time: number) => void): number;
declare const localStorage: { getItem(key: string): string | null };

const DESKTOP = { width: 1400, height: 900 };
const PHONE = { width: 390, height: 844 };
const RED = [229, 56, 59];
const GREEN = [26, 158, 111];
const DAY = 86_400_000;

const live = browserSuite();
const { apiGet } = live;
const openPage = (path = '/explorer', viewport = DESKTOP) => live.openPage(path, viewport);

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
  // The chart draws on its next animation frame: let two pass before reading.
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
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

interface KlinesAnswer { url: URL; cursor: string | null; first: number | null; count: number }

/** Every 200 answer of /v1/klines, in order, with its cursor header and first bar. */
function collectKlines(page: Page): KlinesAnswer[] {
  const answers: KlinesAnswer[] = [];
  page.on('response', async (response: Response) => {
    const url = new URL(response.url());
    if (url.pathname !== '/v1/klines' || response.status() !== 200) return;
    const index = answers.length;
    answers.push({ url, cursor: response.headers()['x-next-end-time'] ?? null, first: null, count: -1 });
    const body = await response.json();
    answers[index].first = body.data.timestamp[0] ?? null;
    answers[index].count = body.data.timestamp.length;
  });
  return answers;
}

/** Monday 00:00 in Shanghai (UTC+8 all year) of the week of an instant. */
function shanghaiMonday(ms: number): number {
  const wall = new Date(ms + 8 * 3_600_000);
  return Date.UTC(wall.getUTCFullYear(), wall.getUTCMonth(), wall.getUTCDate() - ((wall.getUTCDay() + 6) % 7)) - 8 * 3_600_000;
}

/** Wait until every answer's body has been read. */
async function settled(answers: KlinesAnswer[]): Promise<void> {
  await expect.poll(() => answers.every((a) => a.count >= 0), WAIT).toBe(true);
}

/**
 * Each older request of one chart asked the cursor of the answer before it, else end_time = the
 * start of the first loaded bar's period − 1 (`periodStart`: the bar itself for daily bars).
 */
function expectChained(answers: KlinesAnswer[], symbol: string, period: string, periodStart = (ts: number) => ts): KlinesAnswer[] {
  const chain = answers.filter((a) => a.url.searchParams.get('symbol') === symbol && a.url.searchParams.get('period') === period);
  expect(chain[0].url.searchParams.has('end_time')).toBe(false);
  for (let i = 1; i < chain.length; i += 1) {
    const firstLoaded = Math.min(...chain.slice(0, i).map((a) => a.first ?? Infinity));
    expect(chain[i].url.searchParams.get('end_time'), `page ${i}`).toBe(chain[i - 1].cursor ?? String(periodStart(firstLoaded) - 1));
  }
  return chain.slice(1);
}

/** Drag the price chart to the right by `dx` (reveals older bars). */
async function dragRight(page: Page, dx: number): Promise<void> {
  const box = (await page.locator('#price-chart').boundingBox())!;
  const y = box.y + 140;
  await page.mouse.move(box.x + 150, y);
  await page.mouse.down();
  for (let step = 1; step <= 10; step += 1) await page.mouse.move(box.x + 150 + (dx * step) / 10, y);
  await page.mouse.up();
}

/** Drag right until the page has asked for `pages` older pages (or the history ran out). */
async function scrollLeftUntil(page: Page, pages: number): Promise<void> {
  for (let drags = 0; drags < 12; drags += 1) {
    const chart = (await hookOf(page)).chart!;
    if (chart.pages >= pages || chart.exhausted) break;
    await dragRight(page, 700);
    await page.waitForFunction(() => !document.getElementById('chart-note').textContent.startsWith('Loading'), undefined, WAIT);
  }
  await page.waitForFunction((n) => window.__explorer.chart!.pages >= n || window.__explorer.chart!.exhausted, pages, WAIT);
  await page.waitForFunction(() => !document.getElementById('chart-note').textContent.startsWith('Loading'), undefined, WAIT);
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
        await page.waitForFunction((ts) => window.__explorer.legend?.timestamp === ts && window.__explorer.legend!.hovered, d.timestamp[i], WAIT);
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
      await page.waitForFunction((ts) => window.__explorer.legend?.timestamp === ts && !window.__explorer.legend!.hovered, d.timestamp[last], WAIT);
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
      expect(await page.textContent('#live-state')).toBe('Live updates: off (no key, or no symbol on screen).');
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

    // The server's own /v1/me.
    await withPage(DESKTOP, async ({ page }) => {
      await enterKey(page, BROWSER_KEYS.demo);
      await waitForChart(page, '600519.SH', '1d', 'forward');
      await page.waitForFunction(() => document.getElementById('key-plan').textContent !== '', undefined, WAIT);
      const real = (await apiGet('/v1/me')).body.data;
      expect(real).toMatchObject({ key_id: 'demo', plan: 'demo', markets: ['CN', 'HK', 'US', 'CN_FUTURES'], max_symbols: 100 });
      expect(await page.textContent('#key-plan')).toMatch(/^Plan demo · CN, HK, US, CN_FUTURES markets · up to 100 symbols a call · [\d,]+ of 100,000 calls left this minute$/);
      expect(await page.getAttribute('#key-plan', 'title')).toContain(`Data: ${real.features.join(', ').replaceAll('_', ' ')}`);
    });

    // /v1/me in the documented shape, mocked in the browser to show a plan unlike the demo key's.
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

  it('range buttons (1M, 3M, 1Y, 5Y, All) show that span and load the history it needs, page after page, nothing lost or repeated', async () => {
    await withPage(DESKTOP, async ({ page }) => {
      const klines: URL[] = [];
      const answers = collectKlines(page);
      klinesRequests(page, klines);
      await enterKey(page, BROWSER_KEYS.demo);
      await waitForChart(page, '600519.SH', '1d', 'forward');
      const visible = () => page.evaluate(() => window.__explorer.probe.visibleRange());
      const DAY_S = 86_400;
      /** The chart applies a new visible range on its next frame: wait until it starts at the range's first bar. */
      const viewOf = async (range: { from: number | null; to: number }) => {
        await page.waitForFunction(([from, to]) => {
          const view = window.__explorer.probe.visibleRange();
          return view !== null && view.to === to && view.from >= from && view.from - from < 5 * 86_400;
        }, [range.from!, range.to] as const, WAIT);
        return (await visible())!;
      };

      async function press(name: string): Promise<NonNullable<Hook['range']>> {
        await page.click(`#ranges button[data-range="${name}"]`);
        await page.waitForFunction((n) => window.__explorer.range?.name === n, name, WAIT);
        expect(await page.getAttribute(`#ranges button[data-range="${name}"]`, 'aria-pressed')).toBe('true');
        expect(await page.locator('#ranges button[aria-pressed="true"]').count()).toBe(1);
        return (await hookOf(page)).range!;
      }

      // 1Y fits in the 300 bars loaded: no request; the view starts at the first bar of that year.
      const before = klines.length;
      const year = await press('1Y');
      expect(klines.length).toBe(before);
      const to = year.to;
      const yearAgo = new Date(to * 1000);
      yearAgo.setUTCFullYear(yearAgo.getUTCFullYear() - 1);
      expect(year.from).toBe(yearAgo.getTime() / 1000);
      expect(year.to).toBe(to);
      await viewOf(year);

      const month = await press('1M');
      await viewOf(month);
      expect(month.from! - to).toBeLessThanOrEqual(-28 * DAY_S);
      expect(month.from! - to).toBeGreaterThanOrEqual(-31 * DAY_S);
      const quarter = await press('3M');
      await viewOf(quarter);

      // 5Y needs older pages: each asks the cursor of the answer before it, or end_time = first bar − 1.
      const five = await press('5Y');
      expect(five.loaded).toBeGreaterThan(1100);
      await viewOf(five);
      await page.screenshot({ path: `${ARTIFACTS}range-5y.png` });

      // All: pages until an empty answer; the chart then holds the whole history exactly.
      await press('All');
      const all = (await apiGet('/v1/klines?symbol=600519.SH&period=1d&adjust=forward&count=10000')).body.data;
      expect(all.timestamp.length).toBeGreaterThan(5000);
      const { chart } = await hookOf(page);
      expect(chart!.exhausted).toBe(true);
      expect(chart!.timestamps).toEqual(all.timestamp);
      expect(chart!.closes).toEqual(all.close);
      // Each older request followed from the answer before it; the last answer was empty.
      await settled(answers);
      const older = expectChained(answers, '600519.SH', '1d');
      expect(older.length).toBeGreaterThanOrEqual(2);
      expect(older.at(-1)!.count).toBe(0);
      await page.screenshot({ path: `${ARTIFACTS}range-all.png` });
    });
  }, CASE_MS);

  it('scrolling left loads older bars without a cursor (end_time before the first bar\'s week) until an empty answer, then stops asking', async () => {
    await withPage(DESKTOP, async ({ page }) => {
      // A service without the next-page cursor: the answers reach the page without X-Next-End-Time and Link.
      await page.route((url) => url.pathname === '/v1/klines', async (route) => {
        const response = await route.fetch();
        const headers = { ...response.headers() };
        delete headers['x-next-end-time'];
        delete headers.link;
        await route.fulfill({ response, headers });
      });
      const answers = collectKlines(page);
      await enterKey(page, BROWSER_KEYS.demo);
      await waitForChart(page, '600519.SH', '1d', 'forward');
      await page.selectOption('#period', '1w');
      await waitForChart(page, '600519.SH', '1w', 'forward');
      const all = (await apiGet('/v1/klines?symbol=600519.SH&period=1w&adjust=forward&count=10000')).body.data;
      expect(all.timestamp.length).toBeGreaterThan(800);
      expect((await hookOf(page)).chart!.pages).toBe(0);

      // Drag towards the past until the history runs out.
      for (let drags = 0; drags < 15 && !(await hookOf(page)).chart!.exhausted; drags += 1) {
        await dragRight(page, 700);
        await page.waitForFunction(() => !document.getElementById('chart-note').textContent.startsWith('Loading'), undefined, WAIT);
      }
      const { chart } = await hookOf(page);
      expect(chart!.exhausted).toBe(true);
      // A weekly bar is labelled by its last day: the page ends before the first bar's Monday, so no
      // week comes back cut in two.
      expect(answers.every((a) => a.cursor === null)).toBe(true);
      const older = expectChained(answers, '600519.SH', '1w', shanghaiMonday);
      expect(older.length).toBe(chart!.pages);
      expect(older.length).toBeGreaterThanOrEqual(2);
      for (const answer of older) expect(answer.url.searchParams.get('count')).toBe('500');
      // The last answer was empty; the chart holds the whole weekly history, in order, once.
      expect(older.at(-1)!.count).toBe(0);
      expect(older.at(-1)!.url.searchParams.get('end_time')).toBe(String(shanghaiMonday(all.timestamp[0]) - 1));
      expect(chart!.timestamps).toEqual(all.timestamp);
      expect(chart!.closes).toEqual(all.close);
      expect(await page.textContent('#chart-note')).toBe(`Start of the history: the first bar is ${new Date(all.timestamp[0]).toISOString().slice(0, 10)}.`);
      // Exhausted: more scrolling asks nothing.
      const asked = answers.length;
      await dragRight(page, 700);
      await dragRight(page, 700);
      expect(answers.length).toBe(asked);
      await page.screenshot({ path: `${ARTIFACTS}scroll-left-start.png` });
    });
  }, CASE_MS);

  it('scrolling left follows X-Next-End-Time when the answer carries it', async () => {
    await withPage(DESKTOP, async ({ page }) => {
      // The server's answers, each given a cursor 40 days before its first bar (the columnar-answers
      // issue adds the real header; this checks the page asks exactly what the cursor says).
      const cursors: string[] = [];
      await page.route((url) => url.pathname === '/v1/klines', async (route) => {
        const response = await route.fetch();
        const body = await response.json();
        const headers = { ...response.headers() };
        if (body.data.timestamp.length > 0) {
          headers['x-next-end-time'] = String(body.data.timestamp[0] - 40 * DAY);
          cursors.push(headers['x-next-end-time']);
        }
        await route.fulfill({ response, headers, body: JSON.stringify(body) });
      });
      const answers = collectKlines(page);
      await enterKey(page, BROWSER_KEYS.demo);
      await waitForChart(page, '600519.SH', '1d', 'forward');
      expect((await hookOf(page)).chart!.nextEndTime).toBe(Number(cursors.at(-1)));
      await scrollLeftUntil(page, 2);
      await settled(answers);
      const older = expectChained(answers, '600519.SH', '1d');
      expect(older.length).toBe((await hookOf(page)).chart!.pages);
      expect(older.length).toBeGreaterThanOrEqual(2);
      for (const answer of older) {
        expect(answer.cursor).not.toBeNull();
        expect(answer.url.searchParams.get('count')).toBe('500');
      }
      // Page one asked exactly the first answer's cursor (40 days before its first bar, not first − 1).
      expect(Number(older[0].url.searchParams.get('end_time'))).toBe(answers[0].first! - 40 * DAY);
      const { chart } = await hookOf(page);
      expect(chart!.count).toBe(300 + 500 * older.length);
      expect(chart!.nextEndTime).toBe(Number(older.at(-1)!.cursor));
      // Strictly ascending: pages joined in order, nothing repeated.
      expect(chart!.timestamps.every((ts, i, all) => i === 0 || ts > all[i - 1])).toBe(true);
    });
  }, CASE_MS);

  it('renders Chinese names with a CJK font and names the CJK fallbacks in the CSS', async () => {
    await withPage(DESKTOP, async ({ page, context }) => {
      await enterKey(page, BROWSER_KEYS.demo);
      await waitForChart(page, '600519.SH', '1d', 'forward');
      await page.waitForFunction(() => document.getElementById('quote-name').textContent === '贵州茅台', undefined, WAIT);
      const family = await page.evaluate(() => getComputedStyle(document.documentElement).fontFamily);
      const names = ['"Noto Sans CJK SC"', '"Source Han Sans SC"', '"WenQuanYi Micro Hei"', '"PingFang SC"', '"Microsoft YaHei"', 'sans-serif'];
      const positions = names.map((name) => family.indexOf(name));
      expect(positions.every((p) => p >= 0), family).toBe(true);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
      // What chromium actually drew the name with (DevTools protocol): a CJK face, every glyph found.
      const cdp = await context.newCDPSession(page);
      await cdp.send('DOM.enable');
      await cdp.send('CSS.enable');
      // Asked after layout, and again if a live update replaced the text meanwhile.
      let fonts: { familyName: string; glyphCount: number }[] = [];
      for (let attempt = 0; attempt < 10 && fonts.length === 0; attempt += 1) {
        await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
        const { root } = await cdp.send('DOM.getDocument', { depth: -1 });
        const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector: '#quote-name' });
        ({ fonts } = await cdp.send('CSS.getPlatformFontsForNode', { nodeId }));
      }
      const cjk = fonts.filter((f) => /CJK|WenQuanYi|Source Han|PingFang|YaHei|Hiragino/i.test(f.familyName));
      expect(cjk.map((f) => f.glyphCount).reduce((a, b) => a + b, 0), JSON.stringify(fonts)).toBe(4);
      await page.locator('.quote').screenshot({ path: `${ARTIFACTS}cjk-quote.png` });
    });
  }, CASE_MS);
});

describe('the explorer layout', () => {
  for (const viewport of [DESKTOP, PHONE]) {
    it(`fits ${viewport.width}×${viewport.height}: no horizontal overflow, every control on screen`, async () => {
      await withPage(viewport, async ({ page }) => {
        await enterKey(page, BROWSER_KEYS.demo);
        await waitForChart(page, '600519.SH', '1d', 'forward');
        await page.waitForFunction(() => window.__explorer.quote !== null && window.__explorer.depth !== null && window.__explorer.live === 'stream', undefined, WAIT);
        const overflow = await horizontalOverflow(page);
        expect(overflow.scrollWidth, JSON.stringify(overflow)).toBeLessThanOrEqual(overflow.clientWidth);
        await page.waitForFunction(() => document.getElementById('key-plan').textContent !== '', undefined, WAIT);
        // On a phone the key box, adjust and colours wait behind "More" (the chart comes first).
        if (viewport === PHONE && !(await page.isVisible('#api-key'))) await page.click('#controls-toggle');
        const controls = ['#api-key', '#key-save', '#key-forget', '#key-state', '#key-plan', '#symbol', '#symbol-go', '#period', '#adjust', '#colours',
          '#ranges button[data-range="1M"]', '#ranges button[data-range="All"]', '#legend', '#price-chart', '#quote-last', '#live-state'];
        for (const selector of controls) {
          const box = await page.locator(selector).boundingBox();
          expect(box, selector).not.toBeNull();
          expect(await page.isVisible(selector), selector).toBe(true);
          expect(box!.x, selector).toBeGreaterThanOrEqual(0);
          expect(box!.x + box!.width, selector).toBeLessThanOrEqual(viewport.width);
          expect(box!.width, selector).toBeGreaterThan(0);
        }
        // The key box and its buttons sit on one row, side by side, and none covers another.
        const [input, save, forget] = await Promise.all(['#api-key', '#key-save', '#key-forget'].map((s) => page.locator(s).boundingBox()));
        expect(save!.x).toBeGreaterThanOrEqual(input!.x + input!.width);
        expect(forget!.x).toBeGreaterThanOrEqual(save!.x + save!.width);
        // The chart is wide enough to read on a phone and fills its column on a desktop.
        const chart = (await page.locator('#price-chart').boundingBox())!;
        expect(chart.width).toBeGreaterThan(viewport.width * 0.6);
        expect(await page.textContent('#live-state')).toBe('Live updates: pushed over the WebSocket stream (/v1/ws/stream) as the market moves.');
        const name = `explorer-${viewport.width}x${viewport.height}.png`;
        await page.mouse.move(viewport.width - 2, viewport.height - 2);
        await page.screenshot({ path: `${ARTIFACTS}${name}`, fullPage: viewport === PHONE });
        if (viewport === DESKTOP && (process.env.UPDATE_SCREENSHOTS === '1' || !existsSync(`${DOCS_IMG}explorer.png`))) {
          // docs/explorer.md's screenshot: written when missing or asked for (UPDATE_SCREENSHOTS=1), so a
          // test run does not leave a changed image in the tree each time ("calls left" moves).
          mkdirSync(DOCS_IMG, { recursive: true });
          copyFileSync(`${ARTIFACTS}${name}`, `${DOCS_IMG}explorer.png`);
        }
      });
    }, CASE_MS);
  }
});

