// China futures through the sim and the official client's request forms: quotes, K-lines (1d, 1m,
// 5m), intraday, instruments, exchanges. Night sessions: a Friday night's minute bars belong to
// Monday, there are none on a holiday eve, a daily bar is stamped with its trading day, and the
// K-lines carry open_interest and settlement_price (what the client's DataFrames read).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { tableFromIPC } from 'apache-arrow';
import { DuckDBInstance } from '@duckdb/node-api';
import { minuteBarLabels, tradingDayOf } from '../../src/markets/calendar.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';

const sh = (date: string, hhmm: string) => Date.parse(`${date}T${hhmm}:00+08:00`);
const clock = { t: sh('2025-06-13', '22:00') };
let app: FastifyInstance;
beforeAll(async () => { ({ app } = await buildTestApp({ now: () => clock.t })); });
afterAll(async () => { await app.close(); });

// As the official Python client sends them (test/routes/tickflow-client.test.ts).
const SDK_HEADERS = { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'tickflow-python-sdk/0.1.21', 'x-api-key': KEYS.demo };
async function sdk(url: string, options: Partial<InjectOptions> = {}) {
  const res = await app.inject({ method: 'GET', url, ...options, headers: { ...SDK_HEADERS, ...(options.headers ?? {}) } });
  const json = String(res.headers['content-type']).startsWith('application/json');
  return { status: res.statusCode, body: json ? res.json() : undefined, text: res.body };
}

type Columns = Record<string, number[]>;
const KLINE_COLUMNS = ['timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prev_close', 'open_interest', 'settlement_price'];

/** What the client's DataFrame builder needs: every column present, all of one length. */
function frame(data: Columns): number {
  expect(Object.keys(data).sort()).toEqual([...KLINE_COLUMNS].sort());
  const n = data.timestamp.length;
  for (const name of KLINE_COLUMNS) expect(data[name], name).toHaveLength(n);
  return n;
}

// First: the clock only moves forward in this file (answers are cached as at their instant).
describe('the forming day', () => {
  it("Friday 22:00: the newest daily bar is Monday's (the night so far), Friday's is closed and settled", async () => {
    clock.t = sh('2025-06-13', '22:00');
    const { body } = await sdk('/v1/klines?symbol=au2604.SHF&period=1d&count=2');
    frame(body.data);
    expect(body.data.timestamp).toEqual([sh('2025-06-13', '00:00'), sh('2025-06-16', '00:00')]);
    const intraday = (await sdk('/v1/klines/intraday?symbol=au2604.SHF')).body.data;
    frame(intraday);
    expect(intraday.timestamp[0]).toBe(sh('2025-06-13', '21:01'));
    expect(intraday.timestamp.at(-1)).toBe(sh('2025-06-13', '22:00'));
    expect(body.data.volume[1]).toBe(intraday.volume.reduce((a: number, b: number) => a + b, 0));
    const quote = (await sdk('/v1/quotes?symbols=au2604.SHF')).body.data[0];
    expect(quote).toMatchObject({ symbol: 'au2604.SHF', region: 'CN', session: 'regular', last_price: intraday.close.at(-1), volume: body.data.volume[1] });
    expect(quote.ext).toMatchObject({
      type: 'cn_futures', name: '黄金2604', turnover_rate: null, settlement_price: null,
      open_interest: intraday.open_interest.at(-1), prev_settlement_price: body.data.settlement_price[0],
    });
    expect(quote.ext.change_amount).toBeCloseTo(quote.last_price - quote.ext.prev_settlement_price, 6);
  });

});

describe('night sessions in minute bars', () => {
  it('a 1m series across a Friday night: every bar labelled under Monday, the night first', async () => {
    clock.t = sh('2025-06-16', '15:30');
    const { status, body } = await sdk(`/v1/klines?symbol=au2604.SHF&period=1m&start_time=${sh('2025-06-13', '15:01')}&end_time=${sh('2025-06-16', '15:00')}&count=10000`);
    expect(status).toBe(200);
    const n = frame(body.data);
    expect(n).toBe(555);
    expect(body.data.timestamp).toEqual(minuteBarLabels('CN_FUTURES:au', '2025-06-16', 1));
    expect(body.data.timestamp[0]).toBe(sh('2025-06-13', '21:01'));
    expect(body.data.timestamp[329]).toBe(sh('2025-06-14', '02:30'));
    expect(body.data.timestamp[330]).toBe(sh('2025-06-16', '09:01'));
    expect(new Set(body.data.timestamp.map((t: number) => tradingDayOf('CN_FUTURES:au', t)))).toEqual(new Set(['2025-06-16']));
    // Open interest moves bar by bar; the settlement column is the day's running VWAP, its last the day's settlement.
    expect(new Set(body.data.open_interest).size).toBeGreaterThan(100);
    const daily = (await sdk('/v1/klines?symbol=au2604.SHF&period=1d&count=1')).body.data;
    expect(daily.settlement_price).toEqual([body.data.settlement_price[n - 1]]);
    expect(daily.open_interest).toEqual([body.data.open_interest[n - 1]]);
    expect(daily.volume).toEqual([body.data.volume.reduce((a: number, b: number) => a + b, 0)]);
  });

  it('across a holiday eve: no night session on 2025-09-30, the 9th opens at 09:00', async () => {
    clock.t = sh('2025-10-09', '15:30');
    const { body } = await sdk(`/v1/klines?symbol=i2601.DCE&period=1m&start_time=${sh('2025-09-29', '15:01')}&end_time=${sh('2025-10-09', '15:00')}&count=10000`);
    const days = body.data.timestamp.map((t: number) => tradingDayOf('CN_FUTURES:i', t));
    expect(days.filter((d: string) => d === '2025-09-30')).toHaveLength(120 + 225);
    expect(days.filter((d: string) => d === '2025-10-09')).toHaveLength(225);
    const evening = body.data.timestamp.filter((t: number) => t > sh('2025-09-30', '15:00') && t < sh('2025-10-09', '09:00'));
    expect(evening).toEqual([]);
    expect(body.data.timestamp[0]).toBe(sh('2025-09-29', '21:01'));
  });

  it('5m bars aggregate the night on its own session grid (21:05 … 23:00 for iron ore)', async () => {
    clock.t = sh('2025-06-16', '15:30');
    const { body } = await sdk(`/v1/klines?symbol=i2601.DCE&period=5m&start_time=${sh('2025-06-13', '21:00')}&end_time=${sh('2025-06-13', '23:59')}`);
    expect(body.data.timestamp).toHaveLength(24);
    expect(body.data.timestamp[0]).toBe(sh('2025-06-13', '21:05'));
    expect(body.data.timestamp.at(-1)).toBe(sh('2025-06-13', '23:00'));
  });
});

describe('daily bars and the forming day', () => {
  it('after the day session closes the quote carries the settlement', async () => {
    clock.t = sh('2025-06-16', '15:30');
    const quote = (await sdk('/v1/quotes?symbols=au2604.SHF')).body.data[0];
    const daily = (await sdk('/v1/klines?symbol=au2604.SHF&period=1d&count=1')).body.data;
    expect(quote.session).toBe('closed');
    expect(quote.ext.settlement_price).toBe(daily.settlement_price[0]);
  });
});

describe('instruments and exchanges', () => {
  it('instruments.get: ext.type cn_futures with tick size, multiplier, limits from the previous settlement, dates', async () => {
    clock.t = sh('2025-06-16', '10:00');
    const { body } = await sdk('/v1/instruments', { method: 'POST', payload: JSON.stringify({ symbols: ['au2604.SHF', 'SR601.ZCE', 'IF2506.CFX'] }) });
    const [au, sr, ifc] = body.data;
    expect(au).toMatchObject({ symbol: 'au2604.SHF', code: 'au2604', exchange: 'SHF', region: 'CN', type: 'futures', name: '黄金2604' });
    expect(au.ext).toMatchObject({ type: 'cn_futures', tick_size: 0.02, multiplier: 1000, product: 'au', listing_date: '2025-04-16', last_trade_date: '2026-04-15', main_contract: false });
    const prevSettlement = (await sdk('/v1/quotes?symbols=au2604.SHF')).body.data[0].ext.prev_settlement_price;
    expect(au.ext.limit_up).toBeCloseTo(Math.round(prevSettlement * 1.06 / 0.02) * 0.02, 6);
    expect(au.ext.limit_down).toBeCloseTo(Math.round(prevSettlement * 0.94 / 0.02) * 0.02, 6);
    // SR601: the tenth trading day of January 2026 (New Year's Day closes the 1st and 2nd).
    expect(sr.ext).toMatchObject({ type: 'cn_futures', tick_size: 1, multiplier: 10, last_trade_date: '2026-01-16', main_contract: false });
    // IF's last trading day: the third Friday of June 2025.
    expect(ifc.ext).toMatchObject({ tick_size: 0.2, multiplier: 300, last_trade_date: '2025-06-20', main_contract: false });
  });

  it('exchanges.list and exchanges.get_instruments: live contracts, one main contract per product', async () => {
    clock.t = sh('2025-06-16', '10:00');
    const list = (await sdk('/v1/exchanges')).body.data.map((e: { exchange: string }) => e.exchange);
    expect(list).toEqual(['SH', 'SZ', 'BJ', 'HK', 'US', 'SHF', 'DCE', 'ZCE', 'CFX', 'INE', 'GFE']);
    const { status, body } = await sdk('/v1/exchanges/cfx/instruments');
    expect(status).toBe(200);
    expect(body.exchange).toBe('CFX');
    expect(body.data.map((i: { symbol: string; ext: { main_contract: boolean } }) => `${i.symbol}${i.ext.main_contract ? '*' : ''}`)).toEqual([
      'IF2506.CFX', 'IF2507.CFX*', 'IF2509.CFX', 'IF2512.CFX', 'T2509.CFX*', 'T2512.CFX', 'T2603.CFX',
    ]);
    const shf = (await sdk('/v1/exchanges/SHF/instruments?type=futures')).body;
    const mains = shf.data.filter((i: { ext: { main_contract: boolean } }) => i.ext.main_contract).map((i: { symbol: string }) => i.symbol);
    expect(mains).toEqual(['au2512.SHF', 'cu2508.SHF', 'rb2510.SHF']);
    expect(shf.count).toBe(shf.data.length);
  });

  it('a key without CN_FUTURES does not see the futures exchanges and gets 403 for one', async () => {
    expect((await sdk('/v1/exchanges', { headers: { 'x-api-key': KEYS.cnDaily } })).body.data.map((e: { exchange: string }) => e.exchange)).toEqual(['SH', 'SZ', 'BJ']);
    const refused = await sdk('/v1/exchanges/SHF/instruments', { headers: { 'x-api-key': KEYS.cnDaily } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'MARKET_NOT_PERMITTED', details: { missing_markets: ['CN_FUTURES'] } });
  });

  it('an unlisted contract is 404 on a single-symbol route and missing from a batch', async () => {
    clock.t = sh('2025-06-16', '10:00');
    expect((await sdk('/v1/klines?symbol=au2712.SHF&period=1d')).status).toBe(404);
    const res = await app.inject({ url: '/v1/quotes?symbols=au2604.SHF,au2712.SHF', headers: SDK_HEADERS });
    expect(res.json().data.map((q: { symbol: string }) => q.symbol)).toEqual(['au2604.SHF']);
    expect(res.headers['x-missing-symbols']).toBe('au2712.SHF');
  });
});

describe('formats', () => {
  it('CSV K-lines and quotes carry the futures columns; an equity table keeps its shape', async () => {
    clock.t = sh('2025-06-16', '15:30');
    const csv = (await sdk('/v1/klines?symbol=au2604.SHF&period=1d&count=2&format=csv')).text.split('\n');
    expect(csv[0]).toBe('timestamp,open,high,low,close,volume,amount,prev_close,open_interest,settlement_price');
    expect(csv[2].split(',')).toHaveLength(10);
    const quotes = (await sdk('/v1/quotes?symbols=au2604.SHF&format=csv')).text.split('\n')[0];
    expect(quotes.endsWith('ext.open_interest,ext.settlement_price,ext.prev_settlement_price')).toBe(true);
    const equity = (await sdk('/v1/klines?symbol=600000.SH&period=1d&count=2&format=csv')).text.split('\n')[0];
    expect(equity).toBe('timestamp,open,high,low,close,volume,amount,prev_close');
  });
});

describe('binary formats', () => {
  it('Arrow and Parquet K-lines carry open_interest (int64) and settlement_price (float64), equal to JSON', async () => {
    clock.t = sh('2025-06-16', '15:30');
    const url = '/v1/klines?symbol=au2604.SHF&period=1d&count=3';
    const json = (await sdk(url)).body.data;
    const arrow = await app.inject({ url: `${url}&format=arrow`, headers: SDK_HEADERS });
    const table = tableFromIPC(arrow.rawPayload);
    expect(table.schema.fields.slice(-2).map((f) => [f.name, String(f.type)])).toEqual([['open_interest', 'Int64'], ['settlement_price', 'Float64']]);
    expect(Array.from({ length: table.numRows }, (_, i) => Number(table.getChild('open_interest')!.get(i)))).toEqual(json.open_interest);
    expect(Array.from({ length: table.numRows }, (_, i) => table.getChild('settlement_price')!.get(i))).toEqual(json.settlement_price);

    const parquet = await app.inject({ url: `${url}&format=parquet`, headers: SDK_HEADERS });
    const dir = mkdtempSync(join(tmpdir(), 'mdqs-futures-'));
    try {
      const file = join(dir, 'au.parquet');
      writeFileSync(file, parquet.rawPayload);
      const duck = await (await DuckDBInstance.create(':memory:')).connect();
      const rows = (await duck.runAndReadAll(`SELECT open_interest, settlement_price FROM read_parquet('${file}')`)).getRowObjectsJS();
      expect(rows.map((r) => Number(r.open_interest))).toEqual(json.open_interest);
      expect(rows.map((r) => r.settlement_price)).toEqual(json.settlement_price);
      duck.closeSync();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('with the history store on', () => {
  const SIM_DOWN = new Error('sim: unreachable (test)');
  /** A fresh instance on the store in `dir` at `now`; `down`: its vendor's K-lines fail, counted. */
  async function open(dir: string, now: number, down = false) {
    const built = await buildTestApp({
      now: () => now,
      configure: (config) => { config.history = { ...config.history, enabled: true, sqlitePath: join(dir, 'history.sqlite') }; },
    });
    const sim = built.adapters.get('sim')!;
    const calls: string[] = [];
    const real = sim.getCandles!.bind(sim);
    sim.getCandles = async (query, ctx) => {
      calls.push(`${query.symbol.symbol} ${query.period}`);
      if (down) throw SIM_DOWN;
      return real(query, ctx);
    };
    return { app: built.app, calls };
  }

  it('futures K-lines are kept: a fresh instance answers them from the store with the vendor down, futures columns included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mdqs-futures-store-'));
    const now = sh('2025-06-16', '15:30');
    // Monday after the close: the 1m window reaches back over Friday's night session into Friday's day session.
    const urls = [
      '/v1/klines?symbol=au2604.SHF&period=1m&count=600', '/v1/klines?symbol=au2604.SHF&period=1d&count=5',
      '/v1/klines?symbol=au2604.SHF&period=5m&count=100', `/v1/klines?symbol=au2604.SHF&period=1d&count=5&format=arrow`,
    ];
    try {
      clock.t = now;
      const first = await open(dir, now);
      const answers = new Map<string, unknown>();
      for (const url of urls) {
        const res = await first.app.inject({ url, headers: SDK_HEADERS });
        expect(res.statusCode, url).toBe(200);
        answers.set(url, url.includes('arrow') ? tableFromIPC(res.rawPayload).toArray().map((r) => r.toJSON()) : res.json());
      }
      expect(first.calls.length).toBeGreaterThan(0);
      await first.app.close();
      // New caches, the same store file, the vendor down: every answer is the store's, byte for byte the first one.
      const second = await open(dir, now, true);
      for (const url of urls) {
        const res = await second.app.inject({ url, headers: SDK_HEADERS });
        expect(res.statusCode, url).toBe(200);
        if (url.includes('arrow')) {
          const rows = tableFromIPC(res.rawPayload).toArray().map((r) => r.toJSON());
          expect(rows, url).toEqual(answers.get(url));
          expect(Object.keys(rows[0])).toEqual(expect.arrayContaining(['open_interest', 'settlement_price']));
          continue;
        }
        const body = res.json();
        expect(body, url).toEqual(answers.get(url));
        frame(body.data);
      }
      expect(second.calls).toEqual([]);
      const minute = (answers.get(urls[0]) as { data: Columns }).data;
      // Friday's night session (21:01 … 02:30) is there, under Monday.
      expect(minute.timestamp).toContain(sh('2025-06-13', '21:01'));
      expect(minute.timestamp).toContain(sh('2025-06-14', '02:30'));
      await second.app.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("Friday night in session: the store keeps the closed bars, the forming one comes from the vendor; Monday's window then needs only the rest", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mdqs-futures-night-'));
    try {
      const night = sh('2025-06-13', '22:00');
      clock.t = night;
      const first = await open(dir, night);
      const res = await first.app.inject({ url: '/v1/klines?symbol=au2604.SHF&period=1m&count=100', headers: SDK_HEADERS });
      expect(res.statusCode).toBe(200);
      const atNight = res.json().data as Columns;
      expect(atNight.timestamp.at(-1)).toBe(night);
      await first.app.close();

      // The vendor down at 22:30 on a new instance: the closed bars up to 22:00 are the store's; the forming bar is not stored.
      const later = sh('2025-06-13', '22:30');
      const down = await open(dir, later, true);
      const range = `start_time=${sh('2025-06-13', '21:01')}&end_time=${sh('2025-06-13', '21:59')}`;
      const held = await down.app.inject({ url: `/v1/klines?symbol=au2604.SHF&period=1m&${range}`, headers: SDK_HEADERS });
      expect(held.statusCode, held.body).toBe(200);
      const heldBars = held.json().data as Columns;
      expect(heldBars.timestamp).toHaveLength(59);
      expect(heldBars.open_interest).toEqual(atNight.open_interest.slice(atNight.timestamp.indexOf(sh('2025-06-13', '21:01')), -1));
      expect(down.calls).toEqual([]);
      await down.app.close();

      // Monday after the close, on a new instance: the window is whole, and the night's stored part is not asked again.
      const monday = sh('2025-06-16', '15:30');
      const up = await open(dir, monday);
      const whole = await up.app.inject({ url: `/v1/klines?symbol=au2604.SHF&period=1m&start_time=${sh('2025-06-13', '15:01')}&end_time=${sh('2025-06-16', '15:00')}&count=600`, headers: SDK_HEADERS });
      expect(whole.statusCode).toBe(200);
      const bars = whole.json().data as Columns;
      expect(bars.timestamp).toEqual(minuteBarLabels('CN_FUTURES:au', '2025-06-16', 1));
      frame(bars);
      expect(up.calls).toHaveLength(1);
      await up.app.close();
      // And now all of it is the store's.
      const again = await open(dir, monday, true);
      const stored = await again.app.inject({ url: `/v1/klines?symbol=au2604.SHF&period=1m&start_time=${sh('2025-06-13', '15:01')}&end_time=${sh('2025-06-16', '15:00')}&count=600`, headers: SDK_HEADERS });
      expect(stored.json()).toEqual(whole.json());
      const coverage = await again.app.inject({ url: '/v1/coverage?symbols=au2604.SHF&period=1m&start_date=2025-06-13&end_date=2025-06-16', headers: SDK_HEADERS });
      expect(coverage.statusCode).toBe(200);
      // Friday's trading day (from Thursday's night) and Monday's (from Friday's night) both hold bars.
      expect(coverage.json().data['au2604.SHF']).toMatchObject({ adapter: 'sim', start_date: '2025-06-13', end_date: '2025-06-16', expected: 2, stored: 2, missing: [], missing_count: 0 });
      expect(again.calls).toEqual([]);
      await again.app.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
