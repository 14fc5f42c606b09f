// /explorer's files: served by the service itself, under a strict CSP, cacheable, keyless and
// outside the rate limit; nothing else on disk is reachable through them.
import { readdirSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { DEMO_KEY } from '../../src/http/docs.ts';
import { EXPLORER_CSP, EXPLORER_ROOT, explorerAccess } from '../../src/routes/explorer.ts';
import { buildTestApp } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await app.close();
});

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const ASSETS = ['app.js', 'api.js', 'chart.js', 'format.js', 'history.js', 'legend.js', 'live.js', 'markers.js', 'me.js', 'panels.js', 'prefs.js', 'symbols.js', 'explorer.css', 'favicon.svg'];

describe('GET /explorer', () => {
  it('serves the page without a key, with the CSP, no-cache and no rate-limit headers', async () => {
    const res = await app.inject({ url: '/explorer' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(EXPLORER_CSP).toBe(CSP);
    expect(res.headers['content-security-policy']).toBe(CSP);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    expect(res.body).toContain('href="/docs"');
    expect((await app.inject({ url: '/explorer/' })).body).toBe(res.body);
  });

  it('has no inline script or style, and loads only same-origin files', async () => {
    const html = (await app.inject({ url: '/explorer' })).body;
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBe(1);
    expect(scripts[0][1]).toContain('src="/explorer/app.js"');
    expect(scripts[0][2].trim()).toBe('');
    expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
    const loaded = [...html.matchAll(/<(?:script|link)\b[^>]*(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(loaded.sort()).toEqual(['/explorer/app.js', '/explorer/explorer.css', '/explorer/favicon.svg']);
  });

  it.each(ASSETS)('serves %s cacheable, with the CSP, and answers If-None-Match with 304', async (file) => {
    const res = await app.inject({ url: `/explorer/${file}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=3600');
    expect(res.headers['content-security-policy']).toBe(CSP);
    expect(res.body).toBe(readFileSync(`${EXPLORER_ROOT}${file}`, 'utf8'));
    const etag = String(res.headers.etag);
    expect(etag).not.toBe('undefined');
    const again = await app.inject({ url: `/explorer/${file}`, headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
  });

  it('serves the JS modules as JavaScript', async () => {
    for (const file of ASSETS.filter((f) => f.endsWith('.js'))) {
      expect(String((await app.inject({ url: `/explorer/${file}` })).headers['content-type'])).toMatch(/^(text|application)\/javascript/);
    }
    expect(readdirSync(EXPLORER_ROOT).sort()).toEqual([...ASSETS, 'index.html'].sort());
  });

  it('serves lightweight-charts from node_modules as an ES module', async () => {
    const res = await app.inject({ url: '/explorer/vendor/lightweight-charts.mjs' });
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^(text|application)\/javascript/);
    expect(res.headers['cache-control']).toBe('public, max-age=86400');
    const shipped = readFileSync(new URL('../../node_modules/lightweight-charts/dist/lightweight-charts.standalone.production.mjs', import.meta.url), 'utf8');
    expect(res.body).toBe(shipped);
    expect(res.body).toContain('createChart');
  });

  it('answers anything else with a JSON 404, never a file outside the list', async () => {
    for (const url of ['/explorer/nope.js', '/explorer/index.html.bak', '/explorer/..%2Fpackage.json', '/explorer/%2e%2e%2fsrc%2fapp.ts', '/explorer/vendor/other.js']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), url).toMatchObject({ code: 404, error: 'NOT_FOUND' });
    }
  });

  it('is outside the per-IP limit of keyless requests: 150 loads, no 429 and no rate-limit headers', async () => {
    for (let i = 0; i < 150; i += 1) {
      const res = await app.inject({ url: i % 2 === 0 ? '/explorer' : '/explorer/app.js', remoteAddress: '10.9.8.7' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-remaining']).toBeUndefined();
    }
  });
});

describe('GET /explorer/access.json', () => {
  /** A keys file with `demo-key` as an ordinary key (not flagged demo) and the free tier. */
  const unflagged = () => new KeyStore(parseKeysFile({
    plans: { full: { markets: ['CN'], features: ['quotes', 'klines_daily'], rate_limit: { max: 10, window_ms: 60000 }, max_symbols: 5 } },
    keys: [{ id: 'ops', plan: 'full', sha256: sha256Hex(DEMO_KEY) }],
    anonymous: { plan: 'full' },
  }));

  it('names the demo key while the keys file flags it demo, without a key, uncached and outside the rate limit', async () => {
    for (let i = 0; i < 80; i += 1) {
      const res = await app.inject({ url: '/explorer/access.json', remoteAddress: '10.9.8.6' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-remaining']).toBeUndefined();
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-security-policy']).toBe(CSP);
      expect(res.json()).toEqual({ demo_key: 'demo-key', free_tier: null });
    }
  });

  it('with the shipped config/keys.yaml: the demo key and the free tier, its plan spelt out', () => {
    expect(explorerAccess(KeyStore.fromFile(fileURLToPath(new URL('../../config/keys.yaml', import.meta.url))))).toEqual({
      demo_key: 'demo-key',
      free_tier: { plan: 'free', markets: ['CN', 'HK', 'US'], features: ['klines_daily', 'instruments', 'ex_factors', 'batch'] },
    });
  });

  it('never names a key that is not flagged demo, even one whose value is the documented demo key', async () => {
    const { app: other } = await buildTestApp({ keys: unflagged() });
    try {
      const res = await other.inject({ url: '/explorer/access.json' });
      expect(res.json()).toEqual({ demo_key: null, free_tier: { plan: 'full', markets: ['CN'], features: ['quotes', 'klines_daily'] } });
      expect(res.body).not.toContain(DEMO_KEY);
    } finally {
      await other.close();
    }
    // Neither a demo key nor a free tier: the page asks for a key.
    const none = new KeyStore(parseKeysFile({
      plans: { full: { markets: ['CN'], features: ['quotes'], rate_limit: { max: 10, window_ms: 60000 }, max_symbols: 5 } },
      keys: [{ id: 'ops', plan: 'full', sha256: sha256Hex('a-real-key') }],
    }));
    expect(explorerAccess(none)).toEqual({ demo_key: null, free_tier: null });
  });
});

describe('the page scripts', () => {
  const sources = ASSETS.filter((f) => f.endsWith('.js')).map((f) => readFileSync(`${EXPLORER_ROOT}${f}`, 'utf8'));

  it('never put a key in a URL: no api_key parameter anywhere, and the key only goes in X-API-Key', () => {
    for (const source of sources) expect(source).not.toMatch(/api_key/);
    const api = readFileSync(`${EXPLORER_ROOT}api.js`, 'utf8');
    expect(api).toContain("'X-API-Key': key");
    expect(api).toContain('sessionStorage');
    // localStorage holds the colour setting only: prefs.js is the one module that touches it.
    ASSETS.filter((f) => f.endsWith('.js')).forEach((file, i) => {
      if (file !== 'prefs.js') expect(sources[i], file).not.toMatch(/localStorage\s*[.[]/);
    });
    const prefs = readFileSync(`${EXPLORER_ROOT}prefs.js`, 'utf8');
    expect(prefs.match(/localStorage\.\w+\(([^,)]*)/g)).toEqual([
      'localStorage.getItem(COLOURS_STORAGE', 'localStorage.removeItem(COLOURS_STORAGE', 'localStorage.setItem(COLOURS_STORAGE',
    ]);
  });

  it('request nothing from another origin', () => {
    for (const source of sources) {
      expect(source).not.toMatch(/\bfetch\(\s*['"`]https?:/);
      // The live stream goes to this origin only (location.host), with the key in a header.
      for (const open of source.match(/new WebSocket\([^;]*/g) ?? []) expect(open).toContain('${location.host}/v1/ws/stream');
    }
  });
});
