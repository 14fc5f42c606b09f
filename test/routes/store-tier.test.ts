// The history store as a tier of the loader, through the app with an injectable clock and a
// vendor (the sim behind a fake adapter) that can be made to fail: reference data (instruments,
// ex-factors) answers from the store on an instance that just started, fresh until the market's
// next close and stale after it; a window that wants today's forming bar answers the stored
// closed bars with the forming bar from the last quote (stale) or without it (absent), on the
// single-symbol and the batch routes; intraday answers from stored 1m bars; out of session and
// before the next day's open, stored windows answer as plain hits.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { fakeAdapter, type FakeAdapter } from '../helpers/fake-adapter.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-store-tier-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const at = (iso: string) => Date.parse(iso);
const day = (iso: string) => Date.parse(`${iso}T00:00:00+08:00`);
/** Wednesday 2026-11-25, CN morning session. */
const SESSION = at('2026-11-25T10:30:00+08:00');

let clock = SESSION;
const now = () => clock;

async function start(path: string): Promise<{ app: FastifyInstance; vendor: FakeAdapter }> {
  const vendor = fakeAdapter(createSimAdapter({}, { now }));
  const { app } = await buildTestApp({
    now,
    adapters: new Map([['sim', vendor]]),
    configure: (config) => {
      config.history = { ...config.history, enabled: true, sqlitePath: path };
    },
  });
  return { app, vendor };
}

const get = (app: FastifyInstance, url: string) => app.inject({ url, headers: { 'x-api-key': KEYS.demo } });

describe('reference data is history too', () => {
  const path = join(dir, 'reference.sqlite');

  it('instruments and ex-factors answer from the store on a new instance while the vendor fails: fresh until the close, stale after', async () => {
    clock = SESSION;
    let { app, vendor } = await start(path);
    const instrument = await get(app, '/v1/instruments?symbols=600519.SH');
    expect(instrument.statusCode).toBe(200);
    const factors = await get(app, '/v1/klines/ex-factors?symbols=600519.SH');
    expect(factors.statusCode).toBe(200);
    expect((factors.json().data['600519.SH'] as unknown[]).length).toBeGreaterThan(0);
    await app.close();

    // A new instance, the vendor failing, before the close: the stored documents are fresh.
    ({ app, vendor } = await start(path));
    vendor.mode = 'error';
    const fresh = await get(app, '/v1/instruments?symbols=600519.SH');
    expect(fresh.statusCode).toBe(200);
    expect(fresh.json().data).toEqual(instrument.json().data);
    expect(fresh.headers['x-cache']).toBe('HIT');
    expect(fresh.headers['x-cache-tier']).toBe('store');
    const freshFactors = await get(app, '/v1/klines/ex-factors?symbols=600519.SH');
    expect(freshFactors.statusCode).toBe(200);
    expect(freshFactors.json().data).toEqual(factors.json().data);
    expect(vendor.calls.getInstruments + vendor.calls.getExFactors).toBe(0);
    await app.close();

    // After the close the store asks the vendor first; it fails, and the stored documents answer, stale.
    clock = at('2026-11-25T16:00:00+08:00');
    ({ app, vendor } = await start(path));
    vendor.mode = 'error';
    const stale = await get(app, '/v1/instruments?symbols=600519.SH');
    expect(stale.statusCode).toBe(200);
    expect(stale.json().data).toEqual(instrument.json().data);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(vendor.calls.getInstruments).toBe(1);
    // A symbol the store never held still fails: nothing is invented.
    const never = await get(app, '/v1/instruments?symbols=000001.SZ');
    expect(never.statusCode).toBeGreaterThanOrEqual(500);
    await app.close();

    // The vendor back after the close: its answer replaces the stored document (fresh again until the next close).
    ({ app, vendor } = await start(path));
    const refreshed = await get(app, '/v1/klines/ex-factors?symbols=600519.SH');
    expect(refreshed.headers['x-cache']).toBe('MISS');
    expect(vendor.calls.getExFactors).toBe(1);
    await app.close();
    ({ app, vendor } = await start(path));
    vendor.mode = 'error';
    expect((await get(app, '/v1/klines/ex-factors?symbols=600519.SH')).headers['x-cache']).toBe('HIT');
    await app.close();
  });
});

describe('the newest N bars in session while the vendor fails', () => {
  const path = join(dir, 'newest.sqlite');
  const newest = '/v1/klines?symbol=600519.SH&period=1d&adjust=none&count=60';
  let liveBars: { timestamp: number[]; close: number[] };

  it('fills in session: the last bar is the forming one', async () => {
    clock = SESSION;
    const { app } = await start(path);
    const res = await get(app, newest);
    expect(res.statusCode).toBe(200);
    liveBars = res.json().data;
    expect(liveBars.timestamp.at(-1)).toBe(day('2026-11-25'));
    // 1m bars of this morning, stored for the intraday case below.
    expect((await get(app, '/v1/klines?symbol=600519.SH&period=1m&adjust=none&count=120')).statusCode).toBe(200);
    await app.close();
  });

  it('a new instance with the last quote in its tiers: the stored closed bars and the forming bar from the quote (stale)', async () => {
    const { app, vendor } = await start(path);
    const quote = (await get(app, '/v1/quotes?symbols=600519.SH')).json().data[0];
    vendor.mode = 'error';
    const res = await get(app, newest);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-cache']).toBe('STALE');
    expect(res.headers['x-forming-bar']).toBe('stale');
    const bars = res.json().data as { timestamp: number[]; close: number[]; open: number[] };
    expect(bars.timestamp).toHaveLength(60);
    expect(bars.timestamp.at(-1)).toBe(day('2026-11-25'));
    expect(bars.close.at(-1)).toBe(quote.last_price);
    expect(bars.open.at(-1)).toBe(quote.open);
    expect(bars.timestamp.slice(0, -1)).toEqual(liveBars.timestamp.slice(-60, -1));
    await app.close();
  });

  it('a new instance with nothing in its tiers: the stored closed bars without the forming bar (absent), never cached', async () => {
    const { app, vendor } = await start(path);
    vendor.mode = 'error';
    const res = await get(app, newest);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-forming-bar']).toBe('absent');
    const bars = res.json().data as { timestamp: number[] };
    expect(bars.timestamp).toHaveLength(60);
    expect(bars.timestamp.at(-1)).toBeLessThan(day('2026-11-25'));
    expect(bars.timestamp.slice(-59)).toEqual(liveBars.timestamp.slice(-60, -1));
    // Batch: the stored symbol answered without its forming bar, the never-stored one failed.
    const batch = await get(app, '/v1/klines/batch?symbols=600519.SH,000001.SZ&period=1d&adjust=none&count=60');
    expect(batch.statusCode).toBe(200);
    expect(batch.headers['x-forming-bar-absent']).toBe('600519.SH');
    expect(batch.headers['x-failed-symbols']).toBe('000001.SZ');
    expect(batch.headers['x-forming-bar']).toBeUndefined();
    // The vendor back: the next request gets the live bar (nothing stale was cached).
    vendor.mode = 'ok';
    const live = await get(app, newest);
    expect(live.headers['x-forming-bar']).toBeUndefined();
    expect(live.json().data.timestamp.at(-1)).toBe(day('2026-11-25'));
    await app.close();
  });

  it('intraday answers from the stored 1m bars of the session (forming bar absent)', async () => {
    clock = SESSION;
    const { app, vendor } = await start(path);
    vendor.mode = 'error';
    const res = await get(app, '/v1/klines/intraday?symbol=600519.SH');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-cache']).toBe('STALE');
    expect(res.headers['x-forming-bar']).toBe('absent');
    const bars = res.json().data as { timestamp: number[] };
    expect(bars.timestamp.length).toBeGreaterThan(50);
    expect(bars.timestamp[0]).toBe(at('2026-11-25T09:31:00+08:00'));
    expect(bars.timestamp.at(-1)).toBeLessThanOrEqual(at('2026-11-25T10:30:00+08:00'));
    await app.close();
  });
});

describe('out of session and across the day boundary', () => {
  const path = join(dir, 'boundary.sqlite');
  const newest = '/v1/klines?symbol=600519.SH&period=1d&adjust=forward&count=60';

  it('filled after Wednesday\'s close; Thursday before the open and Saturday, a new instance with the vendor failing answers from the store as a hit', async () => {
    clock = at('2026-11-25T16:00:00+08:00');
    let { app, vendor } = await start(path);
    const filled = await get(app, newest);
    expect(filled.statusCode).toBe(200);
    expect(filled.json().data.timestamp.at(-1)).toBe(day('2026-11-25'));
    await app.close();

    for (const when of ['2026-11-26T08:00:00+08:00', '2026-11-28T12:00:00+08:00']) {
      clock = at(when);
      ({ app, vendor } = await start(path));
      vendor.mode = 'error';
      const res = await get(app, newest);
      // Saturday: Thursday's and Friday's bars were never stored: the vendor is needed and failing.
      if (when.startsWith('2026-11-28')) {
        expect(res.statusCode).toBe(502);
        expect(res.json().error).toBe('UPSTREAM_ERROR');
      } else {
        expect(res.statusCode).toBe(200);
        expect(res.headers['x-cache']).toBe('HIT');
        expect(res.headers['x-cache-tier']).toBe('store');
        expect(res.headers['x-forming-bar']).toBeUndefined();
        expect(res.json().data).toEqual(filled.json().data);
        expect(vendor.calls.getCandles).toBe(0);
      }
      await app.close();
    }
  });
});

describe('a simulated fallback never answers ahead of the real vendor', () => {
  it('a window the sim\'s stored series covers is asked of the real vendor first in a [vendor, sim] chain', async () => {
    clock = at('2026-11-28T12:00:00+08:00');
    const path = join(dir, 'fallback.sqlite');
    const window = `/v1/klines?symbol=600519.SH&period=1d&adjust=none&count=30`;
    // The sim alone fills its series.
    const { app: simOnly } = await start(path);
    expect((await get(simOnly, window)).statusCode).toBe(200);
    await simOnly.close();
    // A real vendor ahead of the sim: the store's sim series must not answer for it.
    const vendor = fakeAdapter(createSimAdapter({}, { now }), { id: 'vendor' });
    const { app } = await buildTestApp({
      now,
      adapters: new Map<string, FakeAdapter | ReturnType<typeof createSimAdapter>>([['vendor', vendor], ['sim', createSimAdapter({}, { now })]]) as never,
      configure: (config) => {
        config.routing.markets = { CN: ['vendor', 'sim'], HK: ['vendor', 'sim'], US: ['vendor', 'sim'] };
        (config.routing as { allowSimFallback?: boolean }).allowSimFallback = true;
        config.history = { ...config.history, enabled: true, sqlitePath: path };
      },
    });
    const res = await get(app, window);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('vendor');
    expect(res.headers['x-simulated']).toBeUndefined();
    expect(vendor.calls.getCandles).toBeGreaterThan(0);
    await app.close();
  });
});
