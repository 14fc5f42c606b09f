// The whole-market day answers the same bytes from SQLite and PostgreSQL: the same bars stored in
// both (daily and minute, a symbol suspended that day: covered without a bar, one never stored),
// then GET /v1/klines/market on an app per store answers byte for byte the same JSON and CSV, with
// the same X-Missing-Symbols, unadjusted and forward-adjusted, the stored symbols from the store
// (no vendor candle call). PostgreSQL reads the day as a binary COPY (src/store/pg-copy.ts).
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { simPoolMembers } from '../../adapters/sim/instruments.ts';
import { FEATURES, KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import type { Candles } from '../../src/domain.ts';
import type { HistoryStore } from '../../src/store/index.ts';
import { buildTestApp } from '../helpers/app.ts';
import { fakeAdapter, type FakeAdapter } from '../helpers/fake-adapter.ts';
import { clock, place, ref, type Place } from './harness.ts';

const cn = (iso: string) => Date.parse(`${iso}+08:00`);
const DATE = '2026-10-15';
const DAY = cn(`${DATE}T00:00:00`);
const KEY = 'market-day-key';
const at = clock(cn('2026-10-16T15:30:00'));
const members = simPoolMembers('CN_Stock').map((i) => i.symbol).slice(0, 12);
const SUSPENDED = members[3];
const NEVER_STORED = members[7];
const MINUTE = members.slice(0, 4);

function keys(): KeyStore {
  return new KeyStore(parseKeysFile({
    plans: { full: { markets: ['CN', 'HK', 'US'], features: [...FEATURES], rate_limit: { max: 100000, window_ms: 60000 }, max_symbols: 100 } },
    keys: [{ id: 'full', plan: 'full', sha256: sha256Hex(KEY) }],
  }));
}

/** The sim's bars, without SUSPENDED's bar on DATE (the vendor had none: a suspension). */
async function vendorBars(q: Parameters<NonNullable<ReturnType<typeof createSimAdapter>['getCandles']>>[0]): Promise<Candles> {
  const c = await createSimAdapter({}, { now: at.now }).getCandles!(q) as Candles;
  if (q.symbol.symbol !== SUSPENDED) return c;
  const keep = c.timestamp.map((t) => t < DAY || t >= DAY + 86_400_000);
  const pick = <T>(xs: T[]) => xs.filter((_, i) => keep[i]);
  return { timestamp: pick(c.timestamp), open: pick(c.open), high: pick(c.high), low: pick(c.low), close: pick(c.close), volume: pick(c.volume), amount: pick(c.amount), prev_close: pick(c.prev_close ?? []) };
}

interface Side {
  where: Place;
  store: HistoryStore;
  app: FastifyInstance;
  vendor: FakeAdapter;
}

const sides: Partial<Record<'sqlite' | 'postgres', Side>> = {};

beforeAll(async () => {
  for (const backend of ['sqlite', 'postgres'] as const) {
    const where = place(backend);
    const store = await where.open(at.now);
    for (const symbol of members) {
      if (symbol === NEVER_STORED) continue;
      await store.candles('sim', { symbol: ref(symbol), period: '1d', start: cn('2026-05-04T00:00:00'), end: cn('2026-10-16T00:00:00') }, vendorBars);
    }
    for (const symbol of MINUTE) {
      await store.candles('sim', { symbol: ref(symbol), period: '1m', start: cn('2026-10-14T00:00:00'), end: cn('2026-10-15T23:59:00') }, vendorBars);
    }
    const vendor = fakeAdapter(createSimAdapter({}, { now: at.now }), { id: 'sim' });
    const { app } = await buildTestApp({ now: at.now, keys: keys(), history: store, adapters: new Map([['sim', vendor]]) });
    sides[backend] = { where, store, app, vendor };
  }
}, 120_000);

afterAll(async () => {
  for (const side of Object.values(sides)) {
    await side.app.close();
    await side.store.close();
    await side.where.dispose();
  }
});

describe('the whole-market day on SQLite and PostgreSQL', () => {
  const cases = [
    { name: '1d, unadjusted, JSON', url: `/v1/klines/market?symbols=${members.join(',')}&date=${DATE}&adjust=none` },
    { name: '1d, forward-adjusted, CSV', url: `/v1/klines/market?symbols=${members.join(',')}&date=${DATE}&format=csv` },
    { name: '1m, unadjusted, JSON', url: `/v1/klines/market?symbols=${MINUTE.join(',')}&period=1m&date=${DATE}&adjust=none` },
  ];

  it.each(cases)('answers the same bytes: $name', async ({ url }) => {
    const answers = [];
    for (const side of [sides.sqlite!, sides.postgres!]) {
      const candleCalls = side.vendor.calls.getCandles;
      const res = await side.app.inject({ url, headers: { 'x-api-key': KEY } });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
      answers.push({ body: res.body, missing: res.headers['x-missing-symbols'], calls: side.vendor.calls.getCandles - candleCalls });
    }
    const [sqlite, postgres] = answers;
    expect(postgres.body).toBe(sqlite.body);
    expect(postgres.missing).toBe(sqlite.missing);
    expect(sqlite.body.length).toBeGreaterThan(200);
  });

  it('answers the stored symbols from the store, naming the suspended one as missing', async () => {
    for (const side of [sides.sqlite!, sides.postgres!]) {
      const candleCalls = side.vendor.calls.getCandles;
      const stored = members.filter((s) => s !== NEVER_STORED);
      const res = await side.app.inject({ url: `/v1/klines/market?symbols=${stored.join(',')}&date=${DATE}&adjust=none`, headers: { 'x-api-key': KEY } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-cache-tier']).toBe('store');
      expect(res.headers['x-missing-symbols']).toBe(SUSPENDED);
      expect(side.vendor.calls.getCandles - candleCalls).toBe(0);
      const data = res.json().data as { symbol: string[]; timestamp: number[] };
      expect(data.symbol).toEqual(stored.filter((s) => s !== SUSPENDED));
      expect(new Set(data.timestamp)).toEqual(new Set([DAY]));
    }
  });
});
