// The two cache layers through the routes (docs/architecture.md#caching), on a counting sim adapter and a clock the
// test moves: TTL per market state, stale-while-revalidate, stale-if-error, negative caching and
// the byte bounds. Every step asserts the exact number of upstream calls and X-Cache / Age.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { SymbolRef } from '../../src/domain.ts';
import { buildCountingApp, getWithKey, metricValue, simSymbols, testClock } from '../helpers/cache-app.ts';

const apps: FastifyInstance[] = [];
/** Generous: under a loaded CI box 200 injected requests can take a while to all be waiting. */
const WAIT = { timeout: 15_000, interval: 10 };
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

async function setup(options: Parameters<typeof buildCountingApp>[0] = {}) {
  const built = await buildCountingApp(options);
  apps.push(built.app);
  return { ...built, get: (url: string, headers?: Record<string, string>) => getWithKey(built.app, url, headers) };
}

const MOUTAI: SymbolRef = { symbol: '600519.SH', code: '600519', exchange: 'SH', region: 'CN' } as SymbolRef;

/** What the sim itself answers at instant `at`, as the JSON the route would serve. */
async function simQuoteAt(at: number) {
  const quotes = await createSimAdapter({}, { now: () => at }).getQuotes([MOUTAI]);
  return JSON.parse(JSON.stringify(quotes.get('600519.SH')));
}

/** Saturday 2025-06-21 10:15:30 Asia/Shanghai: every market closed. */
const SATURDAY = Date.UTC(2025, 5, 21, 2, 15, 30);
/** Wednesday 2025-06-18 12:59:30 Asia/Shanghai: CN lunch break, 30 s before the afternoon bell. */
const CN_LUNCH_END = Date.UTC(2025, 5, 18, 4, 59, 30);

describe('TTL by market state', () => {
  it('quotes in session: 2 s fresh, then 1 s stale-while-revalidate with one background refresh', async () => {
    const { get, adapter, clock } = await setup();
    const t0 = clock.t;

    const first = await get('/v1/quotes?symbols=600519.SH');
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-cache']).toBe('MISS');
    expect(first.headers.age).toBe('0');
    expect(adapter.calls.getQuotes).toBe(1);
    expect(first.json().data).toEqual([await simQuoteAt(t0)]);

    clock.advance(1_000);
    const hit = await get('/v1/quotes?symbols=600519.SH');
    expect(hit.statusCode).toBe(200);
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.headers.age).toBe('1');
    expect(hit.body).toBe(first.body);
    expect(adapter.calls.getQuotes).toBe(1);

    clock.advance(1_500);
    const stale = await get('/v1/quotes?symbols=600519.SH');
    expect(stale.statusCode).toBe(200);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.headers.age).toBe('2');
    expect(stale.json().data).toEqual([await simQuoteAt(t0)]);
    await vi.waitFor(() => expect(adapter.calls.getQuotes).toBe(2), WAIT);
    expect(adapter.log[1].symbols).toEqual(['600519.SH']);

    clock.advance(100);
    const refreshed = await get('/v1/quotes?symbols=600519.SH');
    expect(refreshed.statusCode).toBe(200);
    expect(refreshed.headers['x-cache']).toBe('HIT');
    expect(refreshed.headers.age).toBe('0');
    expect(refreshed.json().data).toEqual([await simQuoteAt(t0 + 2_500)]);
    expect(adapter.calls.getQuotes).toBe(2);
  });

  it('quotes while the market is closed (Saturday): 60 s fresh', async () => {
    const { get, adapter, clock } = await setup({ clock: testClock(SATURDAY) });
    expect((await get('/v1/quotes?symbols=600519.SH')).headers['x-cache']).toBe('MISS');

    clock.advance(59_000);
    const hit = await get('/v1/quotes?symbols=600519.SH');
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.headers.age).toBe('59');
    expect(adapter.calls.getQuotes).toBe(1);

    clock.advance(2_500);
    const after = await get('/v1/quotes?symbols=600519.SH');
    expect(after.statusCode).toBe(200);
    expect(after.headers['x-cache']).toBe('MISS');
    expect(after.headers.age).toBe('0');
    expect(adapter.calls.getQuotes).toBe(2);
  });

  it('a closed-market TTL ends at the next session open (lunch break → afternoon bell)', async () => {
    const { get, adapter, clock } = await setup({ clock: testClock(CN_LUNCH_END) });
    expect((await get('/v1/quotes?symbols=600519.SH')).headers['x-cache']).toBe('MISS');
    clock.advance(29_000);
    expect((await get('/v1/quotes?symbols=600519.SH')).headers['x-cache']).toBe('HIT');
    expect(adapter.calls.getQuotes).toBe(1);
    // 13:00:01: the afternoon session is open; a 60 s "closed" TTL would still answer from cache.
    clock.advance(2_000);
    expect((await get('/v1/quotes?symbols=600519.SH')).headers['x-cache']).toBe('MISS');
    expect(adapter.calls.getQuotes).toBe(2);
  });
  it('requests inside the stale window share one background refresh', async () => {
    const { get, adapter, clock } = await setup();
    await get('/v1/quotes?symbols=600519.SH');
    clock.advance(2_500);
    adapter.hold();
    const a = await get('/v1/quotes?symbols=600519.SH');
    const b = await get('/v1/quotes?symbols=600519.SH,600519.SH');
    expect([a.headers['x-cache'], b.headers['x-cache']]).toEqual(['STALE', 'STALE']);
    expect(adapter.calls.getQuotes).toBe(2);
    adapter.release();
    await vi.waitFor(async () => expect((await get('/v1/quotes?symbols=600519.SH')).headers['x-cache']).toBe('HIT'), WAIT);
    expect(adapter.calls.getQuotes).toBe(2);
  });

  it('stale symbols of a batch are refreshed in native batch calls, not one call per symbol', async () => {
    const { get, adapter, clock } = await setup();
    const symbols = simSymbols('CN').slice(0, 100);
    const url = `/v1/quotes?symbols=${symbols.join(',')}`;
    expect((await get(url)).statusCode).toBe(200);
    expect(adapter.calls.getQuotes).toBe(1);
    clock.advance(2_500);
    const stale = await get(url);
    expect(stale.headers['x-cache']).toBe('STALE');
    await vi.waitFor(() => expect(adapter.symbolsOf('getQuotes')).toHaveLength(200), WAIT);
    // sim's maxBatch is 500: the 100 stale symbols fit one vendor call.
    expect(adapter.calls.getQuotes).toBe(2);
  });

  it('intraday lives until the current minute bar closes (10:15:30 → 10:16:00)', async () => {
    const { get, adapter, clock } = await setup();
    const url = '/v1/klines/intraday?symbol=600519.SH&period=1m';
    const first = await get(url);
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-cache']).toBe('MISS');
    clock.advance(29_000);
    expect((await get(url)).headers['x-cache']).toBe('HIT');
    expect(adapter.calls.getIntraday).toBe(1);
    clock.advance(1_500);
    expect((await get(url)).headers['x-cache']).toBe('STALE');
    await vi.waitFor(() => expect(adapter.calls.getIntraday).toBe(2), WAIT);
  });
});

describe('stale-if-error', () => {
  it('serves the old quote, marked STALE with its Age, while the upstream fails inside the 60 s window', async () => {
    const { get, adapter, clock } = await setup();
    const t0 = clock.t;
    const first = await get('/v1/quotes?symbols=600519.SH');
    expect(first.statusCode).toBe(200);
    adapter.mode = 'error';

    clock.advance(5_000);
    const stale = await get('/v1/quotes?symbols=600519.SH');
    expect(stale.statusCode).toBe(200);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.headers.age).toBe('5');
    expect(stale.json().data).toEqual([await simQuoteAt(t0)]);
    expect(adapter.calls.getQuotes).toBe(2);

    clock.advance(56_000);
    const late = await get('/v1/quotes?symbols=600519.SH');
    expect(late.statusCode).toBe(200);
    expect(late.headers['x-cache']).toBe('STALE');
    expect(late.headers.age).toBe('61');
    expect(adapter.calls.getQuotes).toBe(3);
  });

  it.each([
    ['error', 502, 'UPSTREAM_ERROR'],
    ['malformed', 502, 'UPSTREAM_BAD_RESPONSE'],
    ['unavailable', 503, 'UPSTREAM_UNAVAILABLE'],
    ['hang', 504, 'UPSTREAM_TIMEOUT'],
  ] as const)('past the window an upstream %s is the answer (%i %s)', async (mode, status, reason) => {
    const { get, adapter, clock } = await setup({ configure: (c) => { c.upstream.deadlineMs = 200; } });
    expect((await get('/v1/quotes?symbols=600519.SH')).statusCode).toBe(200);
    adapter.mode = mode;
    clock.advance(2_000 + 60_000 + 1);
    const res = await get('/v1/quotes?symbols=600519.SH');
    expect(res.statusCode).toBe(status);
    expect(res.json()).toMatchObject({ code: status, error: reason });
    expect(res.headers['x-cache']).toBeUndefined();
    if (mode === 'unavailable') expect(res.headers['retry-after']).toBe('7');
    expect(adapter.calls.getQuotes).toBe(2);
  });

  it('candles keep answering from cache for 24 h of outage', async () => {
    const { get, adapter, clock } = await setup();
    const url = '/v1/klines?symbol=600519.SH&period=1d&count=5&adjust=none';
    const first = await get(url);
    expect(first.statusCode).toBe(200);
    adapter.mode = 'error';
    clock.advance(3_600_000);
    const stale = await get(url);
    expect(stale.statusCode).toBe(200);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.headers.age).toBe('3600');
    expect(stale.body).toBe(first.body);
    expect(adapter.calls.getCandles).toBe(2);

    clock.advance(86_400_000);
    const gone = await get(url);
    expect(gone.statusCode).toBe(502);
    expect(gone.json().error).toBe('UPSTREAM_ERROR');
  });
});

describe('negative caching', () => {
  it('an unknown symbol is asked upstream once per 60 s, whatever batch it comes in', async () => {
    const { get, adapter, clock } = await setup();
    const first = await get('/v1/quotes?symbols=600001.SH');
    expect(first.headers['x-missing-symbols']).toBe('600001.SH');
    expect(adapter.log.map((c) => c.symbols)).toEqual([['600001.SH']]);

    clock.advance(30_000);
    const mixed = await get('/v1/quotes?symbols=600001.SH,600519.SH');
    expect(mixed.statusCode).toBe(200);
    expect(mixed.headers['x-missing-symbols']).toBe('600001.SH');
    expect(mixed.json().data.map((q: { symbol: string }) => q.symbol)).toEqual(['600519.SH']);
    expect(adapter.log.map((c) => c.symbols)).toEqual([['600001.SH'], ['600519.SH']]);

    clock.advance(31_000);
    const again = await get('/v1/quotes?symbols=600001.SH');
    expect(again.headers['x-missing-symbols']).toBe('600001.SH');
    expect(adapter.log.map((c) => c.symbols)).toEqual([['600001.SH'], ['600519.SH'], ['600001.SH']]);
  });

  it('a 404 SYMBOL_NOT_FOUND on klines is remembered for 60 s', async () => {
    const { get, adapter, clock } = await setup();
    const url = '/v1/klines?symbol=600001.SH&adjust=none';
    expect((await get(url)).statusCode).toBe(404);
    clock.advance(59_000);
    const second = await get(url);
    expect(second.statusCode).toBe(404);
    expect(second.json().error).toBe('SYMBOL_NOT_FOUND');
    expect(adapter.calls.getCandles).toBe(1);
    clock.advance(2_000);
    expect((await get(url)).statusCode).toBe(404);
    expect(adapter.calls.getCandles).toBe(2);
  });
});

describe('partial upstream failures', () => {
  it('a symbol that failed upstream is not pinned as missing by the response cache (closed bars live 24 h)', async () => {
    const { get, adapter, clock } = await setup();
    const url = `/v1/klines/batch?symbols=600519.SH,601318.SH&period=1d&adjust=none&start_time=${Date.UTC(2025, 4, 1)}&end_time=${Date.UTC(2025, 5, 1)}`;
    adapter.failing.set('601318.SH', 'error');
    const during = await get(url);
    expect(during.statusCode).toBe(200);
    // Issue 8: failed upstream, not unknown: X-Failed-Symbols, never X-Missing-Symbols.
    expect(during.headers['x-failed-symbols']).toBe('601318.SH');
    expect(during.headers['x-missing-symbols']).toBeUndefined();
    expect(Object.keys(during.json().data)).toEqual(['600519.SH']);

    adapter.failing.clear();
    clock.advance(1_000);
    const after = await get(url);
    expect(after.statusCode).toBe(200);
    expect(after.headers['x-missing-symbols']).toBeUndefined();
    expect(Object.keys(after.json().data)).toEqual(['600519.SH', '601318.SH']);
    expect(adapter.symbolsOf('getCandles')).toEqual(['600519.SH', '601318.SH', '601318.SH']);
  });
});

describe('byte bounds', () => {
  it('keeps both caches within 1 MiB by evicting least recently used entries', async () => {
    const bound = 1024 * 1024;
    const { app, get, adapter } = await setup({
      configure: (c) => {
        c.cache.dataMaxBytes = bound;
        c.cache.responseMaxBytes = bound;
      },
    });
    const symbols = simSymbols('CN');
    const url = (s: string) => `/v1/klines?symbol=${s}&period=1d&count=200&adjust=none`;
    let served = 0;
    for (const symbol of symbols) {
      const res = await get(url(symbol));
      expect(res.statusCode).toBe(200);
      served += res.rawPayload.length;
    }
    // The bodies alone outgrow the bound (the response cache also charges a gzip copy of each).
    expect(served).toBeGreaterThan(bound);
    expect(adapter.calls.getCandles).toBe(symbols.length);

    const dataBytes = await metricValue(app, 'mdqs_cache_bytes', { layer: 'data' });
    const responseBytes = await metricValue(app, 'mdqs_cache_bytes', { layer: 'response' });
    expect(dataBytes).toBeGreaterThan(bound / 2);
    expect(dataBytes).toBeLessThanOrEqual(bound);
    expect(responseBytes).toBeGreaterThan(bound / 2);
    expect(responseBytes).toBeLessThanOrEqual(bound);

    // The newest entry is still cached; the oldest was evicted from both layers and is fetched again.
    const newest = await get(url(symbols[symbols.length - 1]));
    expect(newest.headers['x-cache']).toBe('HIT');
    expect(adapter.calls.getCandles).toBe(symbols.length);
    const oldest = await get(url(symbols[0]));
    expect(oldest.statusCode).toBe(200);
    expect(oldest.headers['x-cache']).toBe('MISS');
    expect(adapter.calls.getCandles).toBe(symbols.length + 1);
    expect(adapter.log.at(-1)?.symbols).toEqual([symbols[0]]);
  });
});

