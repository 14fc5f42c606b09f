// A symbol the vendor stops knowing (delisted, or dropped from its listing) that the history
// store holds for that vendor answers its stored instrument, `ext.status: 'delisted'`, and its
// stored bars, through the app: the vendor is the sim behind a fake adapter, with a set of symbols
// it no longer lists (absent from its instruments, unknown to its candles). A symbol the store
// never held stays unknown; a vendor failure still answers the stale row as it was.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import type { Adapter } from '../../adapters/types.ts';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { fakeAdapter, type FakeAdapter } from '../helpers/fake-adapter.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-delisted-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const at = (iso: string) => Date.parse(iso);
let clock = at('2026-11-25T10:30:00+08:00');
const now = () => clock;

/** Symbols the vendor no longer lists: absent from its instruments answers. */
const gone = new Set<string>();

async function start(path: string, history = true): Promise<{ app: FastifyInstance; vendor: FakeAdapter }> {
  const sim = createSimAdapter({}, { now });
  const delisting: Adapter = {
    ...sim,
    getInstruments: async (refs, ctx) => {
      const found = await sim.getInstruments!(refs, ctx);
      for (const symbol of gone) found.delete(symbol);
      return found;
    },
    getCandles: async (query, ctx) => (gone.has(query.symbol.symbol) ? undefined : await sim.getCandles!(query, ctx)),
  };
  const vendor = fakeAdapter(delisting);
  const { app } = await buildTestApp({
    now,
    adapters: new Map([['sim', vendor]]),
    configure: (config) => {
      config.history = { ...config.history, enabled: history, sqlitePath: path };
    },
  });
  return { app, vendor };
}

const get = (app: FastifyInstance, url: string) => app.inject({ url, headers: { 'x-api-key': KEYS.demo } });
type Row = { symbol: string; ext: Record<string, unknown> };
const rows = (res: { json(): { data: Row[] } }) => res.json().data;
const one = (res: { json(): { data: Row[] } }, symbol: string) => rows(res).find((row) => row.symbol === symbol);

describe('delisted instruments stay served', () => {
  const path = join(dir, 'delisted.sqlite');

  it('a stored instrument the vendor stops knowing answers delisted; a never-seen unknown symbol stays unknown', async () => {
    gone.clear();
    clock = at('2026-11-25T10:30:00+08:00');
    let { app, vendor } = await start(path);
    const listed = await get(app, '/v1/instruments?symbols=600519.SH');
    expect(listed.statusCode).toBe(200);
    const before = one(listed, '600519.SH')!;
    expect(before.ext.status).toBeUndefined();
    await app.close();

    // After the close the store asks the vendor again; it no longer lists the symbol.
    gone.add('600519.SH').add('000001.SZ');
    clock = at('2026-11-25T16:00:00+08:00');
    ({ app, vendor } = await start(path));
    const delisted = await get(app, '/v1/instruments?symbols=600519.SH');
    expect(delisted.statusCode).toBe(200);
    expect(vendor.calls.getInstruments).toBe(1);
    expect(delisted.headers['x-cache']).toBe('MISS');
    const row = one(delisted, '600519.SH');
    expect(row).toEqual({ ...before, ext: { ...before.ext, status: 'delisted', delisting_date: null } });

    // Batched with a symbol the store never held: that one is still unknown, nothing invented.
    const mixed = await get(app, '/v1/instruments?symbols=600519.SH,000001.SZ');
    expect(mixed.statusCode).toBe(200);
    expect(rows(mixed).map((r) => r.symbol)).toEqual(['600519.SH']);
    expect(mixed.headers['x-missing-symbols']).toBe('000001.SZ');
    const never = await get(app, '/v1/instruments?symbols=000001.SZ');
    expect(rows(never)).toEqual([]);
    expect(never.headers['x-missing-symbols']).toBe('000001.SZ');
    await app.close();

    // The delisted row is what the store keeps now: a new instance answers it with no vendor call.
    ({ app, vendor } = await start(path));
    vendor.mode = 'error';
    const kept = await get(app, '/v1/instruments?symbols=600519.SH');
    expect(kept.statusCode).toBe(200);
    expect(kept.headers['x-cache-tier']).toBe('store');
    expect(one(kept, '600519.SH')!.ext.status).toBe('delisted');
    expect(vendor.calls.getInstruments).toBe(0);
    await app.close();

    // Listed again the next day: the vendor's own answer replaces the delisted row.
    gone.clear();
    clock = at('2026-11-26T16:00:00+08:00');
    ({ app, vendor } = await start(path));
    const relisted = await get(app, '/v1/instruments?symbols=600519.SH');
    expect(relisted.statusCode).toBe(200);
    expect(one(relisted, '600519.SH')!.ext.status).toBeUndefined();
    await app.close();
  });

  it('without a history store an unknown symbol is unknown', async () => {
    gone.clear();
    gone.add('600519.SH');
    clock = at('2026-11-25T16:00:00+08:00');
    const { app } = await start(join(dir, 'off.sqlite'), false);
    const res = await get(app, '/v1/instruments?symbols=600519.SH');
    expect(rows(res)).toEqual([]);
    expect(res.headers['x-missing-symbols']).toBe('600519.SH');
    await app.close();
  });

  it('its stored bars stay served: the newest N end at its last stored bar; a symbol never stored is still not found', async () => {
    gone.clear();
    clock = at('2026-11-25T16:00:00+08:00');
    const barsPath = join(dir, 'bars.sqlite');
    const newest = '/v1/klines?symbol=600519.SH&period=1d&adjust=none&count=20';
    let { app } = await start(barsPath);
    const before = await get(app, newest);
    expect(before.statusCode).toBe(200);
    const bars = before.json().data as { timestamp: number[]; close: number[] };
    expect(bars.timestamp).toHaveLength(20);
    await app.close();

    // Two trading days later the vendor no longer knows the symbol: the stored bars answer, ending
    // at the last one stored; a symbol never stored is not found, as before.
    gone.add('600519.SH').add('000001.SZ');
    clock = at('2026-11-27T16:00:00+08:00');
    let vendor: FakeAdapter;
    ({ app, vendor } = await start(barsPath));
    const after = await get(app, newest);
    expect(after.statusCode).toBe(200);
    expect(vendor.calls.getCandles).toBeGreaterThan(0);
    const served = after.json().data as { timestamp: number[]; close: number[] };
    expect(served.timestamp).toEqual(bars.timestamp);
    expect(served.close).toEqual(bars.close);
    expect((await get(app, '/v1/klines?symbol=000001.SZ&period=1d&adjust=none&count=20')).statusCode).toBe(404);
    await app.close();
  });
});
