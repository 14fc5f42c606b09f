// Schema step 2: a store written in version 1's layout (one row per bar) opens under version 2
// with every bar moved into its block, its coverage intact (no vendor call for what it held), and
// the per-bar table gone.
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { CandleQuery } from '../../adapters/types.ts';
import type { Candles } from '../../src/domain.ts';
import { localMidnight, localTimeMs } from '../../src/markets/calendar.ts';
import type { HistoryStore } from '../../src/store/index.ts';
import { POSTGRES_STEPS, SQLITE_STEPS } from '../../src/store/schema.ts';
import { direct, place, PG_URL, ref, simVendor, type BackendName, type Place } from './harness.ts';

const AFTER_CLOSE = localTimeMs('CN', '2026-11-20', '20:00');
const MOUTAI = ref('600519.SH');
const DAILY: CandleQuery = { symbol: MOUTAI, period: '1d', start: localMidnight('CN', '2025-01-01'), end: localMidnight('CN', '2025-12-31') };
const MINUTES: CandleQuery = { symbol: MOUTAI, period: '1m', start: localTimeMs('CN', '2026-11-16', '09:31'), end: localTimeMs('CN', '2026-11-20', '15:00') };

const open: HistoryStore[] = [];
const places: Place[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
  for (const p of places.splice(0)) await p.dispose();
});

interface V1Series {
  id: number;
  query: CandleQuery;
  bars: Candles;
}

/** Version 1's row encoding in SQLite: prices × 1000 (bit 1), amount × 100 (bit 2) where exact. */
function v1Row(c: Candles, i: number, prevNull: boolean): (number | null)[] {
  const exact = (x: number, k: number) => Number.isSafeInteger(Math.round(x * k)) && Math.round(x * k) / k === x;
  const prev = prevNull || c.prev_close === undefined ? null : c.prev_close[i];
  const prices = [c.open[i], c.high[i], c.low[i], c.close[i], ...(prev === null ? [] : [prev])].every((x) => exact(x, 1000));
  const amount = exact(c.amount[i], 100);
  const px = (x: number) => (prices ? Math.round(x * 1000) : x);
  return [c.timestamp[i], px(c.open[i]), px(c.high[i]), px(c.low[i]), px(c.close[i]), c.volume[i],
    amount ? Math.round(c.amount[i] * 100) : c.amount[i], prev === null ? null : px(prev), (prices ? 1 : 0) | (amount ? 2 : 0)];
}

async function writeV1(p: Place, series: V1Series[]): Promise<void> {
  const cover = (s: V1Series) => ({ lo: s.query.start as number, hi: s.query.end as number });
  if (p.backend === 'sqlite') {
    const db = new DatabaseSync(p.options.sqlitePath!);
    db.exec('CREATE TABLE history_schema (version INTEGER NOT NULL)');
    for (const sql of SQLITE_STEPS[0]) db.exec(sql);
    db.exec('INSERT INTO history_schema (version) VALUES (1)');
    const bar = db.prepare('INSERT INTO bars (series, ts, open, high, low, close, volume, amount, prev_close, scaled) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    for (const s of series) {
      db.prepare('INSERT INTO series (id, adapter, symbol, period) VALUES (?, ?, ?, ?)').run(s.id, 'sim', s.query.symbol.symbol, s.query.period);
      for (let i = 0; i < s.bars.timestamp.length; i++) bar.run(s.id, ...v1Row(s.bars, i, false));
      db.prepare('INSERT INTO coverage (series, lo, hi, recheck_at) VALUES (?, ?, ?, NULL)').run(s.id, cover(s).lo, cover(s).hi);
    }
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  const sch = `"${p.options.postgresSchema}"`;
  try {
    await client.query(`CREATE SCHEMA ${sch}`);
    await client.query(`CREATE TABLE ${sch}.history_schema (version integer NOT NULL)`);
    for (const sql of POSTGRES_STEPS[0]) await client.query(sql.replaceAll('%s', sch));
    await client.query(`INSERT INTO ${sch}.history_schema (version) VALUES (1)`);
    for (const s of series) {
      await client.query(`INSERT INTO ${sch}.series (id, adapter, symbol, period) VALUES ($1, 'sim', $2, $3)`, [s.id, s.query.symbol.symbol, s.query.period]);
      const c = s.bars;
      await client.query(
        `INSERT INTO ${sch}.bars (series, ts, open, high, low, close, volume, amount, prev_close)
         SELECT $1, * FROM unnest($2::bigint[], $3::float8[], $4::float8[], $5::float8[], $6::float8[], $7::bigint[], $8::float8[], $9::float8[])`,
        [s.id, c.timestamp, c.open, c.high, c.low, c.close, c.volume, c.amount, c.prev_close ?? c.timestamp.map(() => null)]);
      await client.query(`INSERT INTO ${sch}.coverage (series, lo, hi, recheck_at) VALUES ($1, $2, $3, NULL)`, [s.id, cover(s).lo, cover(s).hi]);
    }
  } finally {
    await client.end();
  }
}

async function tablesOf(p: Place): Promise<{ tables: string[]; version: number }> {
  if (p.backend === 'sqlite') {
    const db = new DatabaseSync(p.options.sqlitePath!);
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    const version = (db.prepare('SELECT version FROM history_schema').get() as { version: number }).version;
    db.close();
    return { tables, version };
  }
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const tables = (await client.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name', [p.options.postgresSchema])).rows.map((r) => r.table_name as string);
    const version = Number((await client.query(`SELECT version FROM "${p.options.postgresSchema}".history_schema`)).rows[0].version);
    return { tables, version };
  } finally {
    await client.end();
  }
}

describe.each(['sqlite', 'postgres'] as const)('history store schema 1 → 2 on %s', (backend: BackendName) => {
  it('moves every stored bar into blocks: same answers, no vendor call, the per-bar table dropped', async () => {
    const p = place(backend);
    places.push(p);
    const sim = direct(() => AFTER_CLOSE);
    const daily = (await sim(DAILY))!;
    const minutes = (await sim(MINUTES))!;
    expect(daily.timestamp.length).toBeGreaterThan(200);
    expect(minutes.timestamp.length).toBe(5 * 240);
    await writeV1(p, [{ id: 1, query: DAILY, bars: daily }, { id: 2, query: MINUTES, bars: minutes }]);

    const warned: { fields: object; message: string }[] = [];
    const tier = await p.open(() => AFTER_CLOSE, { log: { warn: (fields: object, message: string) => warned.push({ fields, message }) } });
    open.push(tier);
    expect(await tablesOf(p)).toEqual({ tables: ['blocks', 'coverage', 'history_schema', 'ledger', 'reference', 'series'], version: 4 });
    // The boot waited for the conversion: the log says so, with what was moved.
    expect(warned.map((w) => w.message)).toEqual(['history store converted from schema 1 (a row per bar) to schema 2 (day blocks)']);
    expect(warned[0].fields).toMatchObject({ bars: daily.timestamp.length + 5 * 240 });
    // A store already on schema 2 opens without converting anything.
    await tier.close();
    open.pop();
    warned.length = 0;
    const again = await p.open(() => AFTER_CLOSE, { log: { warn: (fields: object, message: string) => warned.push({ fields, message }) } });
    open.push(again);
    expect(warned).toEqual([]);
    const vendor = simVendor(() => AFTER_CLOSE);
    expect(await again.candles('sim', DAILY, vendor.fetch)).toEqual(daily);
    expect(await again.candles('sim', MINUTES, vendor.fetch)).toEqual(minutes);
    const newest = { ...MINUTES, count: 300 };
    expect(await again.candles('sim', newest, vendor.fetch)).toEqual(await sim(newest));
    expect(vendor.calls).toEqual([]);
    const stats = await again.stats();
    expect(stats.byPeriod['1d'].bars).toBe(daily.timestamp.length);
    expect(stats.byPeriod['1m'].bars).toBe(5 * 240);
  });
});

describe('history store schema 1 → 2: row encodings', () => {
  it('unscales version 1 rows exactly, whatever their scaled bits, and keeps a missing prev_close missing', async () => {
    const p = place('sqlite');
    places.push(p);
    const t0 = localTimeMs('CN', '2026-11-16', '09:31');
    const n = 6;
    const bars: Candles = {
      timestamp: Array.from({ length: n }, (_, i) => t0 + i * 60_000),
      open: [10.5, 0.1 + 0.2, 123.4500030517578, 7, 8.125, 9],
      high: [11, 0.5, 124, 7.5, 8.5, 9.5],
      low: [10, 0.1, 123, 6.5, 8, 8.5],
      close: [10.75, 0.3, 123.5, 7.25, 8.25, 9.25],
      volume: [100, 2 ** 40, 3, 0, 5, 6],
      amount: [1050.25, 1e15 + 0.5, 370.5, 0, 41.2, 55.55],
      prev_close: [10, 10.75, 0.3, 123.5, 7.25, 8.25],
    };
    const query: CandleQuery = { symbol: MOUTAI, period: '1m', start: t0, end: t0 + (n - 1) * 60_000 };
    await writeV1(p, [{ id: 1, query, bars }]);
    // One row without prev_close: the range then reads without the column, as version 1 did.
    const db = new DatabaseSync(p.options.sqlitePath!);
    db.prepare('UPDATE bars SET prev_close = NULL WHERE ts = ?').run(t0 + 2 * 60_000);
    const scaled = (db.prepare('SELECT scaled FROM bars ORDER BY ts').all() as { scaled: number }[]).map((r) => r.scaled);
    db.close();
    expect(scaled).toEqual([3, 0, 2, 3, 3, 3]);

    const tier = await p.open(() => AFTER_CLOSE);
    open.push(tier);
    const vendor = simVendor(() => AFTER_CLOSE);
    const { prev_close: _prev, ...withoutPrev } = bars;
    expect(await tier.candles('sim', query, vendor.fetch)).toEqual(withoutPrev);
    const tail = { ...query, start: t0 + 3 * 60_000 };
    expect(await tier.candles('sim', tail, vendor.fetch)).toEqual({
      timestamp: bars.timestamp.slice(3), open: bars.open.slice(3), high: bars.high.slice(3), low: bars.low.slice(3), close: bars.close.slice(3),
      volume: bars.volume.slice(3), amount: bars.amount.slice(3), prev_close: bars.prev_close!.slice(3),
    });
    expect(vendor.calls).toEqual([]);
  });
});
