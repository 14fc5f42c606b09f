// Issue 43.8 in a real browser: a page served on another origin (another port of 127.0.0.1) calls
// the API with a key through fetch in headless Chromium and reads the body and exposed headers,
// the second time from the cache; with server.cors off the same fetch fails.
import { createServer, type Server } from 'node:http';
import type { Browser } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, CN_MORNING } from '../helpers/app.ts';
import { CASE_MS } from './page.ts';
import { BROWSER_KEYS, browserKeyStore, launchChromium } from './server.ts';

let browser: Browser;
let pageServer: Server;
let pageOrigin: string;
const apps: FastifyInstance[] = [];

async function api(origins: string[] | undefined): Promise<string> {
  const { app } = await buildTestApp({
    now: () => CN_MORNING,
    keys: browserKeyStore(),
    configure: (c) => { if (origins !== undefined) c.server.cors = { origins }; },
  });
  apps.push(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
}

beforeAll(async () => {
  pageServer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>dashboard</title><p>a dashboard on another origin</p>');
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  pageOrigin = `http://127.0.0.1:${(pageServer.address() as { port: number }).port}`;
  browser = await launchChromium();
}, CASE_MS);

afterAll(async () => {
  await browser?.close();
  for (const app of apps) await app.close();
  await new Promise((resolve) => pageServer?.close(resolve));
});

interface Seen { ok: true; status: number; symbol: string; cache: string | null; limit: string | null; remaining: string | null; requestId: string | null }
interface Failed { ok: false; error: string }

/** fetch from the page on pageOrigin, as a dashboard's script would. */
async function fetchFromPage(base: string, header: Record<string, string>): Promise<Seen | Failed> {
  const page = await browser.newPage();
  try {
    await page.goto(pageOrigin);
    return await page.evaluate(async ({ url, headers }) => {
      try {
        const res = await fetch(url, { headers });
        const body = await res.json() as { data: { symbol: string }[] };
        return {
          ok: true as const, status: res.status, symbol: body.data[0].symbol, cache: res.headers.get('x-cache'),
          limit: res.headers.get('x-ratelimit-limit'), remaining: res.headers.get('x-ratelimit-remaining'), requestId: res.headers.get('x-request-id'),
        };
      } catch (error) {
        return { ok: false as const, error: String(error) };
      }
    }, { url: `${base}/v1/quotes?symbols=600519.SH`, headers: header });
  } finally {
    await page.close();
  }
}

describe('a page on another origin calls the API', () => {
  it('with server.cors.origins naming it: the body and the exposed headers, the cached answer too', async () => {
    const base = await api([pageOrigin]);
    const first = await fetchFromPage(base, { 'x-api-key': BROWSER_KEYS.demo });
    expect(first).toMatchObject({ ok: true, status: 200, symbol: '600519.SH', cache: 'MISS', limit: '100000', remaining: '99999' });
    expect((first as Seen).requestId).not.toBeNull();
    const second = await fetchFromPage(base, { authorization: `Bearer ${BROWSER_KEYS.demo}` });
    expect(second).toMatchObject({ ok: true, status: 200, symbol: '600519.SH', cache: 'HIT', limit: '100000', remaining: '99998' });
  }, CASE_MS);

  it('with CORS off (the default) the same fetch fails', async () => {
    const base = await api(undefined);
    const seen = await fetchFromPage(base, { 'x-api-key': BROWSER_KEYS.demo });
    expect(seen).toEqual({ ok: false, error: 'TypeError: Failed to fetch' });
  }, CASE_MS);

  it('an origin not listed is refused as well', async () => {
    const base = await api(['http://127.0.0.1:1']);
    const seen = await fetchFromPage(base, { 'x-api-key': BROWSER_KEYS.demo });
    expect(seen).toEqual({ ok: false, error: 'TypeError: Failed to fetch' });
  }, CASE_MS);
});
