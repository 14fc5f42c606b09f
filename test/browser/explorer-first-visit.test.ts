// What a new user meets on opening the explorer (issue 43): a chart straight away through the way
// in the server offers (its public demo key, or the free tier without a key, or a key box when it
// offers neither), one sentence for one failure when the vendors are down, a phone layout with the
// chart in the first screen, and XD labels that never run into each other or into the candles.
// Real listening servers on the sim adapter, Debian's chromium through playwright-core, at
// 1400×900 and 390×844; screenshots land in test/browser/artifacts/.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { ARTIFACTS, CASE_MS, WAIT, apiGet, hookOf, openPage, waitForChart, type Hook, type OpenedPage } from './page.ts';
import { BROWSER_KEYS, browserKeyStore, launchChromium, startLiveServer, type LiveServer } from './server.ts';

// Browser globals inside page.evaluate callbacks (the project compiles without the DOM lib).
declare const window: {
  scrollY: number;
  __explorer: Hook & {
    access: string;
    quoteError?: string;
    depthError?: string;
    problems: { slot: string; cause: string }[];
    probe: {
      xOf(i: number): number | null;
      yOf(p: number): number | null;
      xOfTime(t: number): number | null;
      xdLabels(): { time: number; price: number; text: string }[];
      paneSize(): { width: number; height: number | null };
    };
  };
};
declare const document: any;
declare function getComputedStyle(node: unknown): { fontFamily: string };
declare function requestAnimationFrame(callback: (time: number) => void): number;

const DESKTOP = { width: 1400, height: 900 };
const PHONE = { width: 390, height: 844 };
const VIEWPORTS = [DESKTOP, PHONE];
const name = (viewport: { width: number; height: number }) => `${viewport.width}x${viewport.height}`;

/** A server whose keys file has no demo key, only the free tier; `demo-key` is a valid key there but not flagged demo. */
function freeTierKeys(): KeyStore {
  return new KeyStore(parseKeysFile({
    plans: {
      free: { markets: ['CN', 'HK', 'US'], features: ['klines_daily', 'instruments', 'ex_factors', 'batch'], rate_limit: { max: 100000, window_ms: 60000 }, max_symbols: 500 },
      full: { markets: ['CN', 'HK', 'US'], features: ['quotes', 'depth', 'klines_daily', 'klines_minute', 'intraday', 'ex_factors', 'instruments', 'batch'], rate_limit: { max: 100000, window_ms: 60000 }, max_symbols: 100 },
    },
    keys: [{ id: 'ops', plan: 'full', sha256: sha256Hex(BROWSER_KEYS.demo) }],
    anonymous: { plan: 'free' },
  }));
}

const servers: Record<'demo' | 'free' | 'locked' | 'down', LiveServer | undefined> = { demo: undefined, free: undefined, locked: undefined, down: undefined };
let browser: Browser | undefined;
beforeAll(async () => {
  servers.demo = await startLiveServer();
  servers.free = await startLiveServer(freeTierKeys());
  // A key is required: `demo-key` is valid but not flagged demo, and there is no free tier.
  servers.locked = await startLiveServer(browserKeyStore({ demo: false }));
  // Every vendor call fails (the sim's injected faults): what a user sees with the vendors down.
  servers.down = await startLiveServer(browserKeyStore(), (config) => {
    config.adapters.sim = { ...config.adapters.sim, faults: { errorRate: 1 } };
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  for (const server of Object.values(servers)) await server?.close();
});

async function withPage(server: keyof typeof servers, viewport: { width: number; height: number }, run: (opened: OpenedPage) => Promise<void>): Promise<void> {
  const opened = await openPage(browser!, servers[server]!, '/explorer', viewport);
  try {
    await run(opened);
    expect(opened.problems).toEqual([]);
  } finally {
    await opened.context.close();
  }
}

/** Two animation frames: whatever the chart was handed is drawn, and the labels placed after it. */
const frames = (page: Page) => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(resolve)))));

/** The price chart's canvas is drawn and lies wholly inside the first screen (nothing scrolled). */
async function expectChartInFirstScreen(page: Page, viewport: { width: number; height: number }): Promise<void> {
  expect(await page.evaluate(() => window.scrollY)).toBe(0);
  expect(await page.isVisible('#price-chart')).toBe(true);
  const canvases = page.locator('#price-chart canvas');
  expect(await canvases.count()).toBeGreaterThan(0);
  const chart = (await page.locator('#price-chart').boundingBox())!;
  expect(chart.x).toBeGreaterThanOrEqual(0);
  expect(chart.y).toBeGreaterThanOrEqual(0);
  expect(chart.x + chart.width, JSON.stringify(chart)).toBeLessThanOrEqual(viewport.width);
  expect(chart.y + chart.height, JSON.stringify(chart)).toBeLessThanOrEqual(viewport.height);
  expect(chart.height).toBeGreaterThan(250);
  expect(chart.width).toBeGreaterThan(viewport.width * 0.6);
}

/** Visible elements that can report a problem and say something now (the plan's quiet line and the key's state aside). */
async function problemsOnScreen(page: Page): Promise<{ id: string; text: string }[]> {
  return page.evaluate(() => {
    const out: { id: string; text: string }[] = [];
    for (const node of document.querySelectorAll('#status, .notices p:not(.info), .panel-error, #search-state, #chart-note')) {
      const text = (node.innerText ?? '').trim();
      if (text !== '' && node.offsetParent !== null) out.push({ id: node.id, text });
    }
    return out;
  });
}

describe('opening the explorer', () => {
  for (const viewport of VIEWPORTS) {
    it(`with the demo key enabled: a chart of 600519.SH at once, the demo key shown in the key box, the chart in the first screen (${name(viewport)})`, async () => {
      await withPage('demo', viewport, async ({ page, requests }) => {
        const access = await (await fetch(`${servers.demo!.base}/explorer/access.json`)).json();
        expect(access).toEqual({ demo_key: BROWSER_KEYS.demo, free_tier: null });

        // Nothing typed, nothing clicked.
        await waitForChart(page, '600519.SH', '1d', 'forward');
        const api = await apiGet(servers.demo!, '/v1/klines?symbol=600519.SH&period=1d&adjust=forward&count=300', BROWSER_KEYS.demo);
        expect((await hookOf(page)).chart!.closes).toEqual(api.body.data.close);
        expect(await page.inputValue('#symbol')).toBe('600519.SH');
        expect(await page.inputValue('#api-key')).toBe(BROWSER_KEYS.demo);
        expect(await page.getAttribute('#api-key', 'type')).toBe('text');
        await page.waitForFunction(() => document.getElementById('key-state').textContent.includes('demo key'), undefined, WAIT);
        expect(await page.textContent('#status')).toBe('');
        // The key went in the header only, and the tab keeps no key of its own.
        const calls = requests.filter((r) => new URL(r.url()).pathname === '/v1/klines');
        expect(calls.length).toBeGreaterThan(0);
        for (const call of calls) {
          expect(call.headers()['x-api-key']).toBe(BROWSER_KEYS.demo);
          expect(call.url()).not.toContain(BROWSER_KEYS.demo);
        }
        expect(await page.evaluate(() => sessionStorage.getItem('mdqs.explorer.apiKey'))).toBeNull();

        await page.waitForFunction(() => window.__explorer.quote !== null && window.__explorer.depth !== null, undefined, WAIT);
        await expectChartInFirstScreen(page, viewport);
        if (viewport === PHONE) {
          // The settings wait behind "More"; the symbol and the period stay out.
          for (const hidden of ['#api-key', '#adjust', '#colours']) expect(await page.isVisible(hidden), hidden).toBe(false);
          for (const shown of ['#symbol', '#symbol-go', '#period', '#controls-toggle', '#ranges button[data-range="5Y"]']) expect(await page.isVisible(shown), shown).toBe(true);
          await page.screenshot({ path: `${ARTIFACTS}first-visit-demo-${name(viewport)}.png` });
          await page.click('#controls-toggle');
          expect(await page.getAttribute('#controls-toggle', 'aria-expanded')).toBe('true');
          for (const shown of ['#api-key', '#key-save', '#adjust', '#colours']) expect(await page.isVisible(shown), shown).toBe(true);
          await page.screenshot({ path: `${ARTIFACTS}first-visit-demo-${name(viewport)}-more.png` });
        } else {
          expect(await page.isVisible('#controls-toggle')).toBe(false);
          await page.screenshot({ path: `${ARTIFACTS}first-visit-demo-${name(viewport)}.png` });
        }
      });
    }, CASE_MS);

    it(`with only the free tier: a daily chart without a key, no call its plan refuses, one quiet line on what a key adds (${name(viewport)})`, async () => {
      await withPage('free', viewport, async ({ page, requests }) => {
        // `demo-key` authenticates on this server, but it is not flagged demo: never offered.
        const access = await (await fetch(`${servers.free!.base}/explorer/access.json`)).json();
        expect(access).toEqual({ demo_key: null, free_tier: { plan: 'free', markets: ['CN', 'HK', 'US'], features: ['klines_daily', 'instruments', 'ex_factors', 'batch'] } });

        await waitForChart(page, '600519.SH', '1d', 'forward');
        // The same call without a key.
        const api = await fetch(`${servers.free!.base}/v1/klines?symbol=600519.SH&period=1d&adjust=forward&count=300`);
        expect(api.status).toBe(200);
        expect((await hookOf(page)).chart!.closes).toEqual(((await api.json()) as { data: { close: number[] } }).data.close);
        expect((await hookOf(page)).markers.length).toBeGreaterThan(0);
        expect(await page.inputValue('#api-key')).toBe('');
        await page.waitForFunction(() => document.getElementById('notice-plan').textContent !== '', undefined, WAIT);
        expect(await page.textContent('#notice-plan')).toBe(
          'No key: the free tier (plan free) includes daily and longer bars and ex-dividend markers; quotes, depth, the intraday line and minute bars need a key.');
        expect(await page.textContent('#key-state')).toBe('no key: free tier');
        expect(await page.textContent('#key-plan')).toMatch(/^No key: anonymous plan free · CN, HK, US markets/);
        expect(await page.isDisabled('#period option[value="5m"]')).toBe(true);
        expect(await page.isDisabled('#period option[value="1w"]')).toBe(false);
        // No key on any call, and nothing asked that the plan refuses: no errors at all.
        for (const request of requests.filter((r) => new URL(r.url()).pathname.startsWith('/v1/'))) {
          expect(request.headers()['x-api-key'], request.url()).toBeUndefined();
        }
        const paths = requests.map((r) => new URL(r.url()).pathname);
        for (const refused of ['/v1/quotes', '/v1/depth', '/v1/klines/intraday']) expect(paths, refused).not.toContain(refused);
        expect(await page.textContent('#status')).toBe('');
        expect(await page.textContent('#live-state')).toBe('Live updates: off (the plan in use has no quotes or depth).');
        // The symbol list's line (behind "More" on a phone) is all there is besides the plan's line.
        expect(await problemsOnScreen(page)).toEqual(viewport === PHONE ? []
          : [{ id: 'search-state', text: expect.stringMatching(/^\d+ symbols in \d+ pools; type a code or a name$/) }]);
        expect(await page.isVisible('#notice-plan')).toBe(true);
        await expectChartInFirstScreen(page, viewport);
        await page.screenshot({ path: `${ARTIFACTS}first-visit-free-${name(viewport)}.png` });
      });
    }, CASE_MS);

    it(`with the vendors down: one sentence, said once, whatever failed (${name(viewport)})`, async () => {
      await withPage('down', viewport, async ({ page }) => {
        await page.waitForFunction(() => window.__explorer.chart?.error !== undefined, undefined, WAIT);
        // Every call met the outage: the candles, the markers, the intraday line, the quote and the depth.
        await page.waitForFunction(() => {
          const slots = new Set(window.__explorer.problems.map((p) => p.slot));
          return ['status', 'notice-markers', 'intraday-error', 'quote-error', 'depth-error'].every((s) => slots.has(s));
        }, undefined, WAIT);
        expect((await hookOf(page)).chart).toMatchObject({ symbol: '600519.SH', count: 0, error: expect.stringMatching(/^UPSTREAM_/) });
        // A poll or two more fail too, and still nothing repeats.
        await page.waitForFunction(() => window.__explorer.transport === 'polling', undefined, WAIT);
        await page.waitForTimeout(2500);
        const shown = (await problemsOnScreen(page)).filter((p) => /unavailable|try again|fail|error/i.test(p.text));
        expect(shown).toEqual([{ id: 'status', text: '600519.SH: vendor unavailable, try again' }]);
        const body = await page.innerText('body');
        expect(body.split('try again').length - 1).toBe(1);
        expect(body.split('vendor unavailable').length - 1).toBe(1);
        expect(await page.getAttribute('#status', 'title')).toMatch(/^50\d UPSTREAM_[A-Z]+ · request /);
        await page.screenshot({ path: `${ARTIFACTS}first-visit-vendors-down-${name(viewport)}.png` });
        // The same page at the same time, the way it was before: the five slots each had the sentence.
        expect((await hookOf(page) as unknown as { problems: { cause: string }[] }).problems.filter((p) => p.cause === 'vendor').length).toBeGreaterThanOrEqual(5);
      });
    }, CASE_MS);

    it(`XD labels on 1w over 5Y: no two labels touch, none covers a candle, every marker keeps its arrow (${name(viewport)})`, async () => {
      await withPage('demo', viewport, async ({ page }) => {
        await waitForChart(page, '600519.SH', '1d', 'forward');
        await page.fill('#symbol', 'AAPL.US');
        await page.click('#symbol-go');
        await waitForChart(page, 'AAPL.US', '1d', 'forward');
        await page.selectOption('#period', '1w');
        await waitForChart(page, 'AAPL.US', '1w', 'forward');
        await page.click('#ranges button[data-range="5Y"]');
        await page.waitForFunction(() => window.__explorer.range?.name === '5Y', undefined, WAIT);
        await frames(page);
        await page.mouse.move(viewport.width - 2, viewport.height - 2);

        const all = (await apiGet(servers.demo!, '/v1/klines?symbol=AAPL.US&period=1w&adjust=forward&count=10000', BROWSER_KEYS.demo)).body.data;
        const highs = new Map<number, number>(all.timestamp.map((t: number, i: number) => [t, all.high[i]]));
        const drawn = await page.evaluate(() => {
          const probe = window.__explorer.probe;
          const hook = window.__explorer;
          const canvas = document.createElement('canvas').getContext('2d');
          // The chart draws marker text in its layout font: 12 px of the page's family.
          canvas.font = `12px ${getComputedStyle(document.documentElement).fontFamily}`;
          const labels = probe.xdLabels().map((label) => {
            const x = probe.xOfTime(label.time)!;
            const y = probe.yOf(label.price)!;
            const width = canvas.measureText(label.text).width;
            // lightweight-charts centres a price marker's text 0.6 em above its price, 1 em tall.
            return { text: label.text, left: x - width / 2, right: x + width / 2, top: y - 0.6 * 12 - 6, bottom: y - 0.6 * 12 + 6 };
          });
          const bars = hook.chart!.timestamps.map((timestamp, i) => ({ timestamp, x: probe.xOf(i) }));
          const legend = document.getElementById('legend').getBoundingClientRect().bottom - document.getElementById('price-chart').getBoundingClientRect().top;
          return { labels, bars, legend, pane: probe.paneSize(), markers: hook.markers.length, markerTimes: hook.markerTimes.length };
        });
        const visible = drawn.bars.filter((b) => b.x !== null && b.x >= 0 && b.x <= drawn.pane.width);
        // Five years of weekly bars on screen, with the quarterly dividends of those years.
        expect(visible.length).toBeGreaterThan(240);
        expect(drawn.labels.length).toBeGreaterThanOrEqual(viewport === PHONE ? 1 : 4);
        // Labels are thinned, markers are not: every marker still stands on its bar.
        expect(drawn.markers).toBeGreaterThan(drawn.labels.length);
        const labels = [...drawn.labels].sort((a, b) => a.left - b.left);
        for (let i = 0; i < labels.length; i += 1) {
          const label = labels[i];
          expect(label.left, label.text).toBeGreaterThanOrEqual(0);
          expect(label.right, label.text).toBeLessThanOrEqual(drawn.pane.width);
          // Below the legend drawn over the chart's top.
          expect(label.top, label.text).toBeGreaterThanOrEqual(drawn.legend);
          if (i > 0) expect(label.left, `${labels[i - 1].text} | ${label.text}`).toBeGreaterThan(labels[i - 1].right);
          // Above every candle under it.
          for (const bar of visible.filter((b) => b.x! >= label.left && b.x! <= label.right)) {
            const high = await page.evaluate((h) => window.__explorer.probe.yOf(h), highs.get(bar.timestamp)!);
            expect(label.bottom, `${label.text} over ${new Date(bar.timestamp).toISOString().slice(0, 10)}`).toBeLessThanOrEqual(high!);
          }
        }
        await page.screenshot({ path: `${ARTIFACTS}first-visit-xd-1w-5y-${name(viewport)}.png` });
      });
    }, CASE_MS);
  }

  it('with the vendors down out of session and across midnight (Asia/Shanghai): still one sentence, and a retry after midnight too', async () => {
    const clock = servers.down!.clock;
    const before = clock.now;
    // 23:59:30 in Shanghai: CN closed, the next day 30 s away.
    clock.now = Date.UTC(2025, 5, 18, 15, 59, 30);
    try {
      await withPage('down', DESKTOP, async ({ page }) => {
        await page.waitForFunction(() => window.__explorer.chart?.error !== undefined, undefined, WAIT);
        await page.waitForFunction(() => ['status', 'intraday-error', 'quote-error'].every((s) => window.__explorer.problems.some((p) => p.slot === s)), undefined, WAIT);
        const once = async () => {
          const shown = (await problemsOnScreen(page)).filter((p) => /unavailable|try again|fail|error/i.test(p.text));
          expect(shown).toEqual([{ id: 'status', text: '600519.SH: vendor unavailable, try again' }]);
          expect((await page.innerText('body')).split('try again').length - 1).toBe(1);
        };
        await once();
        // Past midnight: a new trading day; "Show" again meets the same outage, said once again.
        clock.now += 60_000;
        const loads = (await hookOf(page) as unknown as { loads: number }).loads;
        await page.click('#symbol-go');
        await page.waitForFunction((n) => (window.__explorer as unknown as { loads: number }).loads > n && window.__explorer.chart?.error !== undefined, loads, WAIT);
        await page.waitForFunction(() => window.__explorer.problems.some((p) => p.slot === 'intraday-error'), undefined, WAIT);
        await once();
      });
    } finally {
      clock.now = before;
    }
  }, CASE_MS);

  it('with neither: asks for a key (the key box open on a phone too), asks the API nothing, and charts once a key is in', async () => {
    await withPage('locked', PHONE, async ({ page, requests }) => {
      const access = await (await fetch(`${servers.locked!.base}/explorer/access.json`)).json();
      expect(access).toEqual({ demo_key: null, free_tier: null });
      await page.waitForFunction(() => window.__explorer.access === 'none', undefined, WAIT);
      expect(await page.textContent('#status')).toContain('An API key is needed');
      expect(await page.textContent('#price-empty')).toBe('No chart yet: enter a key above.');
      expect(await page.isVisible('#api-key')).toBe(true);
      expect(await page.inputValue('#api-key')).toBe('');
      expect(requests.map((r) => new URL(r.url()).pathname).filter((p) => p.startsWith('/v1/') && p !== '/v1/meta')).toEqual([]);
      await page.screenshot({ path: `${ARTIFACTS}first-visit-locked-${name(PHONE)}.png` });
      await page.fill('#api-key', BROWSER_KEYS.demo);
      await page.click('#key-save');
      await waitForChart(page, '600519.SH', '1d', 'forward');
      expect(await page.textContent('#key-state')).toBe('key accepted (kept in this tab only)');
    });
  }, CASE_MS);
});
