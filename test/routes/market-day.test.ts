// GET /v1/klines/market: one day of a universe as one table with a symbol column. Over a real
// socket on the sim vendor with a SQLite store: every member's bar equals its /v1/klines window;
// CSV, Arrow (apache-arrow) and Parquet (DuckDB's read_parquet) carry the same rows; symbols
// without a bar (unknown, or suspended that day: stored as covered with no bar) are named in
// X-Missing-Symbols; a universe larger than max_symbols is one request, bounded by max_bars and
// paged by its Link header, losing and repeating no symbol; a new instance with the vendor down
// answers a stored day from the store.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { simPoolMembers } from '../../adapters/sim/instruments.ts';
import { FEATURES, KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import type { Candles } from '../../src/domain.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import { openHistoryStore, type HistoryStore } from '../../src/store/index.ts';
import { buildTestApp } from '../helpers/app.ts';
import { fakeAdapter } from '../helpers/fake-adapter.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-market-day-'));
const cn = (iso: string) => Date.parse(`${iso}+08:00`);
/** Friday 2026-10-16 after the close. */
let clock = cn('2026-10-16T15:30:00');
const now = () => clock;
const DATE = '2026-10-15';
const SUSPENDED = '000002.SZ';

const KEY = { full: 'full-key', paged: 'paged-key', daily: 'daily-key' };
function keys(): KeyStore {
  const plan = (features: readonly string[], extra: object = {}) => ({
    markets: ['CN', 'HK', 'US'], features: [...features], rate_limit: { max: 100000, window_ms: 60000 }, max_symbols: 10, ...extra,
  });
  return new KeyStore(parseKeysFile({
    plans: { full: plan(FEATURES), paged: plan(FEATURES, { max_bars: 30 }), daily: plan(['klines_daily']) },
    keys: Object.entries(KEY).map(([plan, key]) => ({ id: plan, plan, sha256: sha256Hex(key) })),
  }));
}

let store: HistoryStore;
let app: FastifyInstance;
let base: string;
let duck: DuckDBConnection;

async function get(url: string, key = KEY.full): Promise<{ status: number; headers: Headers; body: Buffer; json: () => any }> {
  const res = await fetch(base + url, { headers: { 'x-api-key': key } });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body, json: () => JSON.parse(body.toString()) };
}

type Row = { symbol: string; timestamp: number; open: number; high: number; low: number; close: number; volume: number; amount: number; prev_close: number | null };
const COLUMNS = ['symbol', 'timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prev_close'] as const;

function rowsOf(data: Record<string, unknown[]>): Row[] {
  return (data.symbol as string[]).map((_, i) => Object.fromEntries(COLUMNS.map((c) => [c, data[c]?.[i] ?? null])) as Row);
}

beforeAll(async () => {
  store = await openHistoryStore({
    backend: 'sqlite', sqlitePath: join(dir, 'history.sqlite'), now,
    revision: { dailyBars: 0, minuteBars: 0 }, retentionDays: { '1m': 0, '1d': 0 },
  });
  // A suspension: the vendor had no bar for SUSPENDED on DATE (covered, empty).
  const sim = createSimAdapter({}, { now });
  const day = cn(`${DATE}T00:00:00`);
  await store.candles('sim', { symbol: parseSymbol(SUSPENDED)!, period: '1d', start: day - 7 * 86_400_000, end: day + 86_400_000 - 1 }, async (q) => {
    const c = await sim.getCandles!(q) as Candles;
    const keep = c.timestamp.map((t) => t !== day);
    const pick = <T>(xs: T[]) => xs.filter((_, i) => keep[i]);
    return { timestamp: pick(c.timestamp), open: pick(c.open), high: pick(c.high), low: pick(c.low), close: pick(c.close), volume: pick(c.volume), amount: pick(c.amount), prev_close: pick(c.prev_close ?? []) };
  });
  ({ app } = await buildTestApp({ now, keys: keys(), history: store, adapters: new Map([['sim', createSimAdapter({}, { now })]]) }));
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  duck = await (await DuckDBInstance.create(':memory:')).connect();
});

afterAll(async () => {
  duck?.closeSync();
  await app.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('GET /v1/klines/market', () => {
  const members = simPoolMembers('CN_Stock').map((i) => i.symbol);
  let rows: Row[];

  // The first answer fetches every member's day from the sim (seconds on a busy machine).
  it('answers every member\'s bar of the day, each equal to its own /v1/klines window', { timeout: 120_000 }, async () => {
    expect(members.length).toBeGreaterThan(10);
    const res = await get(`/v1/klines/market?universe=CN_Equity_A&date=${DATE}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('link')).toBeNull();
    rows = rowsOf(res.json().data);
    // The same request again is a response-cache hit with the same headers.
    const again = await get(`/v1/klines/market?universe=CN_Equity_A&date=${DATE}`);
    expect(again.headers.get('x-cache')).toBe('HIT');
    expect(again.headers.get('x-missing-symbols')).toBe(res.headers.get('x-missing-symbols'));
    expect(again.body.equals(res.body)).toBe(true);
    const answered = rows.map((r) => r.symbol);
    const missing = (res.headers.get('x-missing-symbols') ?? '').split(',').filter((s) => s !== '');
    expect([...answered, ...missing].sort()).toEqual([...members].sort());
    expect(answered).toEqual(members.filter((s) => !missing.includes(s)));
    expect(rows.every((r) => r.timestamp === cn(`${DATE}T00:00:00`))).toBe(true);
    for (const symbol of [members[0], members[5], members.at(-1)!]) {
      const one = await get(`/v1/klines?symbol=${symbol}&period=1d&start_time=${cn(`${DATE}T00:00:00`)}&end_time=${cn(`${DATE}T23:59:59`)}`);
      const bar = one.json().data;
      const row = rows.find((r) => r.symbol === symbol)!;
      expect([row.timestamp, row.open, row.high, row.low, row.close, row.volume, row.amount]).toEqual(
        [bar.timestamp[0], bar.open[0], bar.high[0], bar.low[0], bar.close[0], bar.volume[0], bar.amount[0]]);
    }
    // Raw prices differ from the default forward-adjusted ones only where the symbol has events after the day.
    const raw = rowsOf((await get(`/v1/klines/market?universe=CN_Stock&date=${DATE}&adjust=none`)).json().data);
    expect(raw.map((r) => r.symbol)).toEqual(answered);
  });

  it('answers the same table as CSV, Arrow and Parquet (read by DuckDB)', async () => {
    const url = `/v1/klines/market?universe=CN_Stock&date=${DATE}`;
    const csv = await get(`${url}&format=csv`);
    expect(csv.status).toBe(200);
    const lines = csv.body.toString().trim().split('\n');
    expect(lines[0]).toBe(COLUMNS.join(','));
    expect(lines.slice(1).map((line) => line.split(',')[0])).toEqual(rows.map((r) => r.symbol));
    expect(lines.slice(1).map((line) => Number(line.split(',')[5]))).toEqual(rows.map((r) => r.close));

    const arrow = tableFromIPC((await get(`${url}&format=arrow`)).body);
    expect(arrow.numRows).toBe(rows.length);
    expect(arrow.schema.fields.map((f) => f.name)).toEqual([...COLUMNS]);
    expect(arrow.getChild('symbol')!.toArray().map(String)).toEqual(rows.map((r) => r.symbol));
    expect([...arrow.getChild('volume')!.toArray()]).toEqual(rows.map((r) => BigInt(r.volume)));

    const file = join(dir, 'day.parquet');
    writeFileSync(file, (await get(`${url}&format=parquet`)).body);
    const read = await duck.runAndReadAll(`SELECT symbol, epoch_ms(timestamp) AS ts, open, high, low, close, volume, amount, prev_close FROM read_parquet('${file}')`);
    const fromDuck = read.getRowObjectsJS().map((r) => ({ ...r, ts: Number(r.ts), volume: Number(r.volume) }));
    expect(fromDuck).toEqual(rows.map((r) => ({ symbol: r.symbol, ts: r.timestamp, open: r.open, high: r.high, low: r.low, close: r.close, volume: r.volume, amount: r.amount, prev_close: r.prev_close })));
  });

  it('names symbols with no bar that day in X-Missing-Symbols: unknown, or suspended (stored as covered without a bar)', async () => {
    const res = await get(`/v1/klines/market?symbols=600519.SH,999999.SH,${SUSPENDED},000001.SZ&date=${DATE}`);
    expect(res.status).toBe(200);
    expect(rowsOf(res.json().data).map((r) => r.symbol)).toEqual(['600519.SH', '000001.SZ']);
    expect(res.headers.get('x-missing-symbols')).toBe(`999999.SH,${SUSPENDED}`);
  });

  it('is bounded by max_bars, not max_symbols: a larger answer pages by its Link, losing and repeating no symbol', async () => {
    const seen: Row[] = [];
    let url: string | undefined = `/v1/klines/market?universe=CN_Stock&date=${DATE}&format=json`;
    let pages = 0;
    while (url !== undefined) {
      const res = await get(url, KEY.paged);
      expect(res.status, url).toBe(200);
      const page = rowsOf(res.json().data);
      const missing = (res.headers.get('x-missing-symbols') ?? '').split(',').filter((s) => s !== '');
      expect(page.length + missing.length).toBeLessThanOrEqual(30);
      seen.push(...page);
      pages += 1;
      url = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '')?.[1];
    }
    expect(pages).toBe(Math.ceil(members.length / 30));
    expect(seen).toEqual(rows);
    // A minute day (240 bars a symbol) does not fit 30 bars at all.
    const minute = await get(`/v1/klines/market?symbols=600519.SH&period=1m&date=${DATE}`, KEY.paged);
    expect(minute.status).toBe(400);
    expect(minute.json().error).toBe('REQUEST_TOO_LARGE');
  });

  it('answers a minute day: each symbol\'s session of 1m bars', async () => {
    const res = await get(`/v1/klines/market?symbols=600519.SH,000001.SZ&period=1m&date=${DATE}&adjust=none`);
    expect(res.status).toBe(200);
    const minute = rowsOf(res.json().data);
    expect(minute.filter((r) => r.symbol === '600519.SH')).toHaveLength(240);
    expect(minute.filter((r) => r.symbol === '000001.SZ')).toHaveLength(240);
    expect(minute[0].timestamp).toBe(cn(`${DATE}T09:31:00`));
  });

  it('refuses what it cannot answer with the documented errors', async () => {
    const holiday = await get('/v1/klines/market?universe=CN_Stock&date=2026-10-01');
    expect(holiday.status).toBe(400);
    expect(holiday.json().error).toBe('INVALID_PARAMETER');
    expect(holiday.json().message).toMatch(/National Day/);
    // Monday 2026-10-19 has not begun on Friday after the close.
    const future = await get('/v1/klines/market?universe=CN_Stock&date=2026-10-19');
    expect(future.status).toBe(400);
    expect(future.json().message).toMatch(/has not begun/);
    for (const url of [`/v1/klines/market?date=${DATE}`, `/v1/klines/market?universe=CN_Stock&symbols=600519.SH&date=${DATE}`, '/v1/klines/market?universe=CN_Stock&date=2026-1-5', `/v1/klines/market?universe=CN_Stock&date=${DATE}&cursor=9999`]) {
      const res = await get(url);
      expect(res.status, url).toBe(400);
    }
    expect((await get(`/v1/klines/market?universe=Nope&date=${DATE}`)).json().error).toBe('INVALID_UNIVERSE');
    const noPools = await get(`/v1/klines/market?universe=CN_Stock&date=${DATE}`, KEY.daily);
    expect(noPools.status).toBe(403);
    expect(noPools.json().error).toBe('NO_POOLS_PERMISSION');
    const noMinute = await get(`/v1/klines/market?symbols=600519.SH&period=1m&date=${DATE}`, KEY.daily);
    expect(noMinute.json().error).toBe('NO_KLINES_MINUTE_PERMISSION');
    expect((await get(`/v1/klines/market?symbols=600519.SH&date=${DATE}`, KEY.daily)).status).toBe(200);
  });

  it('a new instance with the vendor down answers a stored day from the store', async () => {
    const symbols = members.slice(0, 5).join(',');
    const vendor = fakeAdapter(createSimAdapter({}, { now }), { id: 'sim' });
    vendor.mode = 'error';
    const { app: fresh } = await buildTestApp({ now, keys: keys(), history: store, adapters: new Map([['sim', vendor]]) });
    const res = await fresh.inject({ url: `/v1/klines/market?symbols=${symbols}&date=${DATE}&adjust=none`, headers: { 'x-api-key': KEY.full } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-cache-tier']).toBe('store');
    expect(vendor.calls.getCandles).toBe(0);
    const raw = rowsOf((await get(`/v1/klines/market?symbols=${symbols}&date=${DATE}&adjust=none`)).json().data);
    expect(rowsOf(res.json().data)).toEqual(raw);
    // The whole universe, adjusted (ex-factors from the store too): the same table the per-symbol
    // windows made on the first instance, read in one statement.
    const oneRead = vi.spyOn(store, 'storedWindows');
    const perSymbol = vi.spyOn(store, 'stored');
    const all = await fresh.inject({ url: `/v1/klines/market?symbols=${members.join(',')}&date=${DATE}`, headers: { 'x-api-key': KEY.full } });
    expect(all.statusCode).toBe(200);
    expect(oneRead).toHaveBeenCalledTimes(1);
    expect(perSymbol).not.toHaveBeenCalled();
    oneRead.mockRestore();
    perSymbol.mockRestore();
    expect(all.headers['x-cache-tier']).toBe('store');
    expect(rowsOf(all.json().data)).toEqual(rows);
    expect(vendor.calls.getCandles + vendor.calls.getExFactors).toBe(0);
    await fresh.close();
  });
});
