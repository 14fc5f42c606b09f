// Cache status through the real app: X-Cache and X-Cache-Tier come from the result's DataStatus —
// a response-cache hit and a data-tier hit both say the tier; a lower data tier shared by two
// instances (as Redis would be) answers the second one without a vendor call.
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import type { DataEntry } from '../../src/data/loader.ts';
import { MapTier, settle } from '../data/fakes.ts';
import { appWith, CN_MORNING, vendor, type TestApp } from '../data/vendor-app.ts';

const apps: TestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((t) => t.app.close()));
});

async function setup(dataTiers?: MapTier<DataEntry>[], now = () => CN_MORNING) {
  const v = vendor('vendor', now);
  const t = await appWith({ markets: { CN: ['vendor'], HK: ['vendor'], US: ['vendor'] }, adapters: [v], dataTiers, now });
  apps.push(t);
  return { t, v };
}

describe('X-Cache / X-Cache-Tier', () => {
  it('a miss says MISS without a tier; the repeat is a HIT from memory', async () => {
    const { t, v } = await setup();
    const miss = await t.get('/v1/quotes?symbols=600519.SH');
    expect(miss.headers['x-cache']).toBe('MISS');
    expect(miss.headers['x-cache-tier']).toBeUndefined();
    const hit = await t.get('/v1/quotes?symbols=600519.SH');
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.headers['x-cache-tier']).toBe('memory');
    expect(hit.body).toBe(miss.body);
    expect(v.symbolsOf('getQuotes')).toEqual(['600519.SH']);
  });

  it('another request over cached data (a data-tier hit) is a HIT from memory, no vendor call', async () => {
    const { t, v } = await setup();
    await t.get('/v1/depth?symbol=600519.SH');
    const batch = await t.get('/v1/depth/batch?symbols=600519.SH');
    expect(batch.statusCode).toBe(200);
    expect(batch.headers['x-cache']).toBe('HIT');
    expect(batch.headers['x-cache-tier']).toBe('memory');
    expect(v.symbolsOf('getDepth')).toEqual(['600519.SH']);
  });

  it('a request mixing cached and fetched data is a MISS', async () => {
    const { t, v } = await setup();
    await t.get('/v1/quotes?symbols=600519.SH');
    const mixed = await t.get('/v1/quotes?symbols=600519.SH,000001.SZ');
    expect(mixed.headers['x-cache']).toBe('MISS');
    expect(mixed.headers['x-cache-tier']).toBeUndefined();
    expect(v.symbolsOf('getQuotes')).toEqual(['600519.SH', '000001.SZ']);
  });

  it('a lower data tier shared by two instances answers the second without a vendor call, named in X-Cache-Tier', async () => {
    const shared = new MapTier<DataEntry>('redis', () => CN_MORNING);
    const first = await setup([shared]);
    const second = await setup([shared]);
    const fetched = await first.t.get('/v1/quotes?symbols=600519.SH');
    expect(fetched.headers['x-cache']).toBe('MISS');
    expect(shared.sets.map((s) => s.key)).toEqual(['quotes|vendor|600519.SH']);
    const res = await second.t.get('/v1/quotes?symbols=600519.SH');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-cache']).toBe('HIT');
    expect(res.headers['x-cache-tier']).toBe('redis');
    expect(res.json()).toEqual(fetched.json());
    expect(second.v.calls).toEqual([]);
  });
});

// config/default.yaml: quotes in session live 2 s, then 1 s stale-while-revalidate, and may be
// served up to 60 s past their TTL while the vendor fails.
describe('stale data through the app', () => {
  it('stale-while-revalidate: STALE at once, one background refresh, then a HIT on the refreshed data', async () => {
    let clock = CN_MORNING;
    const { t, v } = await setup(undefined, () => clock);
    await t.get('/v1/quotes?symbols=600519.SH');
    clock += 2_000;
    const stale = await t.get('/v1/quotes?symbols=600519.SH');
    expect(stale.statusCode).toBe(200);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.headers.age).toBe('2');
    await settle();
    expect(v.symbolsOf('getQuotes')).toEqual(['600519.SH', '600519.SH']);
    const fresh = await t.get('/v1/quotes?symbols=600519.SH');
    expect(fresh.headers['x-cache']).toBe('HIT');
    expect(fresh.headers.age).toBe('0');
    expect(v.symbolsOf('getQuotes')).toHaveLength(2);
  });

  it('stale-if-error: past TTL + SWR with the vendor failing, the old data answers STALE and is not stored', async () => {
    let clock = CN_MORNING;
    const { t, v } = await setup(undefined, () => clock);
    const first = await t.get('/v1/quotes?symbols=600519.SH');
    clock += 3_000;
    v.mode = new AppError('UPSTREAM_ERROR', 'vendor down');
    const stale = await t.get('/v1/quotes?symbols=600519.SH');
    expect(stale.statusCode).toBe(200);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.headers.age).toBe('3');
    expect(stale.headers['x-failed-symbols']).toBeUndefined();
    expect(stale.json()).toEqual(first.json());
    const again = await t.get('/v1/quotes?symbols=600519.SH');
    expect(again.headers['x-cache']).toBe('STALE');
    expect(v.symbolsOf('getQuotes')).toHaveLength(3);
  });

  it('past the stale-if-error window the vendor failure answers (502)', async () => {
    let clock = CN_MORNING;
    const { t, v } = await setup(undefined, () => clock);
    await t.get('/v1/quotes?symbols=600519.SH');
    clock += 62_000;
    v.mode = new AppError('UPSTREAM_ERROR', 'vendor down');
    const res = await t.get('/v1/quotes?symbols=600519.SH');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ error: 'UPSTREAM_ERROR' });
  });
});
