// What the browser tests share: a test file's live server and browser, a fresh page on the server
// that records every request and every page problem, the page's test hook, and the artifacts
// folder for screenshots.
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { BROWSER_KEYS, launchChromium, startLiveServer, type LiveServer } from './server.ts';

/** Screenshots (gitignored: test/browser/artifacts/.gitignore); docs/img/ holds docs/explorer.md's. */
export const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));
export const DOCS_IMG = fileURLToPath(new URL('../../docs/img/', import.meta.url));
mkdirSync(ARTIFACTS, { recursive: true });

// Browser globals inside page.evaluate callbacks (the project compiles without the DOM lib).
declare const document: { documentElement: { scrollWidth: number; clientWidth: number } };
declare const window: unknown;

// Generous guards on conditions (2 shared cores); never a fixed sleep.
export const WAIT = { timeout: 20_000 };
export const CASE_MS = 120_000;

export interface ChartHook {
  symbol: string;
  period: string;
  adjust: string;
  count: number;
  lastClose: number | null;
  lastTime: number | null;
  firstTime: number | null;
  closes: number[];
  timestamps: number[];
  /** Futures: the open-interest line's points (empty for other instruments). */
  openInterest?: number[];
  pages: number;
  exhausted: boolean;
  nextEndTime: number | null;
  error?: string;
  message?: string;
}

export interface LegendHook {
  time: string;
  timestamp: number;
  hovered: boolean;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
  change: string;
  xd: string;
}

/* The page's test hook, as the page fills it. */
export interface Hook {
  chart: ChartHook | null;
  intraday: { count: number; lastClose: number | null; error?: string } | null;
  quote: { timestamp: number; last_price: number; ext: { change_amount: number; change_pct: number } } | null;
  depth: { bid_prices: number[]; bid_volumes: number[]; ask_prices: number[]; ask_volumes: number[] } | null;
  markers: string[];
  markerTimes: number[];
  markerIndexes: number[];
  legend: LegendHook | null;
  colours: { mode: string; scheme: string; up: string; down: string; wickUp: string; wickDown: string } | null;
  range: { name: string; from: number | null; to: number; loaded: number } | null;
  keyState: string;
  live: string;
  liveUpdates: number;
  transport: string;
  badge: { upstream: string; simulated: boolean };
}

export interface OpenedPage {
  context: BrowserContext;
  page: Page;
  requests: Request[];
  problems: string[];
}

/** A fresh context (own sessionStorage and localStorage) that records every request and every page problem. */
export async function openPage(browser: Browser, server: LiveServer, path: string, viewport = { width: 1280, height: 900 }): Promise<OpenedPage> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const requests: Request[] = [];
  const problems: string[] = [];
  page.on('request', (request) => requests.push(request));
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}${error.stack ? `\n${error.stack}` : ''}`));
  page.on('console', (message) => {
    // Chromium logs every non-2xx fetch; the page reports those itself, in words (asserted by the tests).
    if (message.type() === 'error' && !/the server responded with a status of \d{3}/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  await page.goto(`${server.base}${path}`);
  // The explorer opens on a chart by itself when the server offers a way in (demo key, free tier):
  // a test starts once that opening is over (or the page asks for a key), so what it records is its own.
  if (path.startsWith('/explorer')) {
    await page.waitForFunction(() => {
      const hook = (window as unknown as { __explorer?: { access?: string; loads: number } }).__explorer;
      return hook !== undefined && hook.access !== undefined && (hook.access === 'none' || hook.loads >= 1);
    }, undefined, WAIT);
  }
  return { context, page, requests, problems };
}

export interface BrowserSuite {
  readonly server: LiveServer;
  readonly browser: Browser;
  /** A GET of the API on the live server, with the demo key unless told. */
  apiGet(path: string, key?: string): ReturnType<typeof apiGet>;
  openPage(path: string, viewport?: { width: number; height: number }): Promise<OpenedPage>;
}

/** A test file's live server (startLiveServer) and browser: started before its tests, closed after them. */
export function browserSuite(): BrowserSuite {
  let server: LiveServer | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    server = await startLiveServer();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });
  return {
    get server() {
      return server!;
    },
    get browser() {
      return browser!;
    },
    apiGet: (path, key = BROWSER_KEYS.demo) => apiGet(server!, path, key),
    openPage: (path, viewport) => openPage(browser!, server!, path, viewport),
  };
}

export const hookOf = (page: Page): Promise<Hook> => page.evaluate(() => (window as unknown as { __explorer: Hook }).__explorer);

export async function enterKey(page: Page, key: string): Promise<void> {
  // On a phone the key box waits behind "More".
  if (!(await page.isVisible('#api-key'))) await page.click('#controls-toggle');
  await page.fill('#api-key', key);
  await page.click('#key-save');
}

export async function pick(page: Page, symbol: string): Promise<void> {
  await page.fill('#symbol', symbol);
  await page.click('#symbol-go');
}

/** Wait until the hook satisfies `predicate` (run in the page, with the hook as its argument). */
export async function waitForHook(page: Page, predicate: string): Promise<void> {
  await page.waitForFunction(`(() => { const hook = window.__explorer; return ${predicate}; })()`, undefined, WAIT);
}

export async function waitForChart(page: Page, symbol: string, period: string, adjust: string): Promise<void> {
  await page.waitForFunction(([s, p, a]) => {
    const chart = (window as unknown as { __explorer: Hook }).__explorer.chart;
    return chart !== null && chart.symbol === s && chart.period === p && chart.adjust === a && chart.error === undefined;
  }, [symbol, period, adjust] as const, WAIT);
}

export async function apiGet(server: LiveServer, path: string, key: string): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${server.base}${path}`, { headers: { 'x-api-key': key } });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

export const price = (value: number): string => value.toFixed(Math.abs(value) < 10 ? 3 : 2);

/** The page fits the viewport's width: no horizontal scrolling, nothing cut off on the right. */
export async function horizontalOverflow(page: Page): Promise<{ scrollWidth: number; clientWidth: number }> {
  return page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
}
