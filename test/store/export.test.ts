// `history export`: the store written as Hive-partitioned Parquet (and CSV) files, read back by
// DuckDB with read_parquet(…, hive_partitioning = true) row for row equal to the store; a rerun
// replaces the files (never duplicates rows), a narrower rerun replaces its periods whole, and
// bad options are usage errors (exit 2).
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { BasePeriod } from '../../src/domain.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import { runHistoryCommand } from '../../src/store/cli.ts';
import { openHistoryStore, type HistoryStore } from '../../src/store/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-export-'));
const env = { ...process.env, MDQS__history__sqlitePath: join(dir, 'h.sqlite'), CONFIG_FILE: '' };
const out = join(dir, 'out');
const cn = (iso: string) => Date.parse(`${iso}+08:00`);
const DAILY = ['600519.SH', '000001.SZ', 'AAPL.US'];
const MINUTE = ['600519.SH', '00700.HK'];
let duck: DuckDBConnection;

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let stdout = '';
  let stderr = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => { stdout += String(chunk); return true; });
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => { stderr += String(chunk); return true; });
  try {
    return { code: await runHistoryCommand(args, env), out: stdout, err: stderr };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

async function withStore<T>(work: (store: HistoryStore) => Promise<T>): Promise<T> {
  const store = await openHistoryStore({
    backend: 'sqlite', sqlitePath: env.MDQS__history__sqlitePath, now: () => cn('2026-10-16T16:00:00'),
    revision: { dailyBars: 0, minuteBars: 0 }, retentionDays: { '1m': 0, '1d': 0 },
  });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

type Row = { period: string; year: number; symbol: string; ts: number; open: number; high: number; low: number; close: number; volume: number; amount: number; prev_close: number | null };

/** The store's bars as export rows (its own read, not the export's code), sorted like the query below. */
async function storeRows(filter: (period: BasePeriod, symbol: string, ts: number) => boolean = () => true): Promise<Row[]> {
  return withStore(async (store) => {
    const rows: Row[] = [];
    for (const [period, symbols] of [['1d', DAILY], ['1m', MINUTE]] as const) {
      for (const symbol of [...symbols].sort()) {
        const bars = await store.storedBars!({ adapter: 'sim', symbol, period }, 0, Number.MAX_SAFE_INTEGER);
        bars.timestamp.forEach((ts, i) => {
          if (!filter(period, symbol, ts)) return;
          const tz = symbol.endsWith('.US') ? 'America/New_York' : 'Asia/Shanghai';
          const year = Number(new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric' }).format(ts));
          const prev = bars.prev_close?.[i];
          rows.push({ period, year, symbol, ts, open: bars.open[i], high: bars.high[i], low: bars.low[i], close: bars.close[i], volume: bars.volume[i], amount: bars.amount[i], prev_close: prev !== undefined && Number.isFinite(prev) ? prev : null });
        });
      }
    }
    return rows;
  });
}

async function exported(glob: string, reader = 'read_parquet'): Promise<Row[]> {
  const result = await duck.runAndReadAll(`SELECT period, year, symbol, epoch_ms(timestamp) AS ts, open, high, low, close, volume, amount, prev_close
    FROM ${reader}('${glob}', hive_partitioning = true) ORDER BY period, symbol, ts`);
  return result.getRowObjectsJS().map((r) => ({
    period: String(r.period), year: Number(r.year), symbol: String(r.symbol), ts: Number(r.ts), open: r.open as number, high: r.high as number, low: r.low as number,
    close: r.close as number, volume: Number(r.volume), amount: r.amount as number, prev_close: r.prev_close as number | null,
  }));
}

beforeAll(async () => {
  duck = await (await DuckDBInstance.create(':memory:')).connect();
  const sim = createSimAdapter({}, { now: () => cn('2026-10-16T16:00:00') });
  await withStore(async (store) => {
    // Daily bars across three years (2024-11 … 2026-02), minute bars of two sessions.
    for (const symbol of DAILY) {
      await store.candles('sim', { symbol: parseSymbol(symbol)!, period: '1d', start: cn('2024-11-01T00:00:00'), end: cn('2026-02-10T00:00:00') }, (q) => sim.getCandles!(q));
    }
    for (const symbol of MINUTE) {
      await store.candles('sim', { symbol: parseSymbol(symbol)!, period: '1m', start: cn('2026-10-14T00:00:00'), end: cn('2026-10-15T23:59:00') }, (q) => sim.getCandles!(q));
    }
  });
});

afterAll(() => {
  duck?.closeSync();
  rmSync(dir, { recursive: true, force: true });
});

describe('history export', () => {
  let all: Row[];

  it('writes Hive partitions (period, year) that DuckDB reads back row for row equal to the store', async () => {
    const res = await run(['export', '--out', out]);
    expect(res.code, res.err).toBe(0);
    all = await storeRows();
    expect(all.length).toBeGreaterThan(3 * 250 + 2 * 2 * 240 - 1);
    expect(res.out).toContain(`exported ${all.length} bars of ${DAILY.length + MINUTE.length} series`);
    expect(readdirSync(join(out, 'period=1d')).sort()).toEqual(['year=2024', 'year=2025', 'year=2026']);
    expect(readdirSync(join(out, 'period=1m'))).toEqual(['year=2026']);
    expect(readdirSync(join(out, 'period=1d', 'year=2025'))).toEqual(['part-0.parquet']);
    expect(await exported(join(out, '**', '*.parquet'))).toEqual(all);
    // The progress bar went to stderr (not a TTY here: lines).
    expect(res.err).toMatch(/\[#+\] 5\/5 1m /);
  });

  it('a rerun replaces the files, never adding rows; a narrower one replaces its periods whole', async () => {
    expect((await run(['export', '--out', out])).code).toBe(0);
    expect(await exported(join(out, '**', '*.parquet'))).toEqual(all);
    const narrow = await run(['export', '--out', out, '--symbols', '600519.SH', '--period', '1d', '--from', '2025-01-01', '--to', '2025-12-31']);
    expect(narrow.code, narrow.err).toBe(0);
    const from = cn('2025-01-01T00:00:00');
    const to = cn('2026-01-01T00:00:00');
    const expected = all.filter((r) => r.period === '1m' || (r.symbol === '600519.SH' && r.ts >= from && r.ts < to));
    expect(await exported(join(out, '**', '*.parquet'))).toEqual(expected);
    expect(readdirSync(join(out, 'period=1d'))).toEqual(['year=2025']);
    // Nothing of the work directory is left behind.
    expect(readdirSync(out).sort()).toEqual(['period=1d', 'period=1m']);
  });

  it('writes CSV that DuckDB reads the same way', async () => {
    const csv = join(dir, 'csv');
    expect((await run(['export', '--out', csv, '--format', 'csv', '--period', '1m'])).code).toBe(0);
    expect(existsSync(join(csv, 'period=1m', 'year=2026', 'part-0.csv'))).toBe(true);
    const rows = await exported(join(csv, '**', '*.csv'), 'read_csv');
    expect(rows.map((r) => [r.symbol, r.ts, r.close, r.volume])).toEqual(all.filter((r) => r.period === '1m').map((r) => [r.symbol, r.ts, r.close, r.volume]));
  });

  it('--universe exports the stored series of its members only', async () => {
    const universe = join(dir, 'universe');
    expect((await run(['export', '--out', universe, '--universe', 'CN_Equity_A', '--period', '1d'])).code).toBe(0);
    const rows = await exported(join(universe, '**', '*.parquet'));
    expect([...new Set(rows.map((r) => r.symbol))]).toEqual(['000001.SZ', '600519.SH']);
    expect(rows).toEqual(all.filter((r) => r.period === '1d' && r.symbol !== 'AAPL.US'));
  });

  it('refuses bad options with the usage (exit 2)', async () => {
    for (const args of [[], ['--out', out, '--period', '5m'], ['--out', out, '--format', 'json'], ['--out', out, '--from', '2025-13-01'],
      ['--out', out, '--from', '2025-02-01', '--to', '2025-01-01'], ['--out', out, '--symbols', 'nope'], ['--out', out, '--universe', 'CN_Stock', '--symbols', '600519.SH']]) {
      const res = await run(['export', ...args]);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.err).toContain('history export --out DIR');
    }
  });
});
