// The embedded backend: one SQLite file through Node 24's built-in node:sqlite (no native build,
// nothing downloaded at install). Synchronous calls are short (indexed range reads, one
// transaction per fill); WAL lets the CLI read and warm while the server runs, busy_timeout makes
// two writers wait for each other instead of failing.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { BasePeriod, Candles } from '../domain.ts';
import { sizedCandles } from '../candles/window.ts';
import { cut, overlayAll, type Segment } from './coverage.ts';
import {
  emptyStats, tallySeries, type Backend, type DropFilter, type FillHook, type FillInput, type HistoryStats, type SeriesKey,
} from './backend.ts';
import { SCHEMA_VERSION, SchemaTooNewError, SQLITE_STEPS } from './schema.ts';

const BUSY_TIMEOUT_MS = 10_000;
const PRICE_SCALE = 1000;
const AMOUNT_SCALE = 100;
/** Bars a retention transaction deletes before the event loop gets a turn (~10 ms of work). */
const PRUNE_CHUNK = 10_000;
/** Rows per INSERT statement of a fill (10 parameters a row; SQLite allows 32,766). */
const UPSERT_ROWS = 100;

function upsertSql(rows: number): string {
  return `INSERT INTO bars (series, ts, open, high, low, close, volume, amount, prev_close, scaled)
    VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
    ON CONFLICT (series, ts) DO UPDATE SET open = excluded.open, high = excluded.high, low = excluded.low,
      close = excluded.close, volume = excluded.volume, amount = excluded.amount, prev_close = excluded.prev_close,
      scaled = excluded.scaled`;
}

/** x × scale is an integer that divides back to exactly x (checked, never assumed). */
function exact(x: number, scale: number): boolean {
  const q = Math.round(x * scale);
  return Number.isSafeInteger(q) && q / scale === x;
}

/** ts, open, high, low, close, volume, amount, prev_close, scaled */
type Row = [number, number, number, number, number, number, number, number | null, number];

/** Stored rows (oldest first) to columns, unscaling as it goes: one pass, no object per row. */
function rowsToColumns(rows: readonly Row[]): Candles {
  const n = rows.length;
  const c = sizedCandles(n);
  const prev = new Array<number>(n);
  let allPrev = true;
  for (let i = 0; i < n; i++) {
    const [ts, open, high, low, close, volume, amount, prevClose, scaled] = rows[i];
    const k = (scaled & 1) !== 0 ? PRICE_SCALE : 1;
    c.timestamp[i] = Number(ts);
    c.open[i] = open / k;
    c.high[i] = high / k;
    c.low[i] = low / k;
    c.close[i] = close / k;
    c.volume[i] = Number(volume);
    c.amount[i] = (scaled & 2) !== 0 ? amount / AMOUNT_SCALE : amount;
    if (prevClose === null) allPrev = false;
    else prev[i] = prevClose / k;
  }
  if (allPrev) c.prev_close = prev;
  return c;
}

function openDatabase(path: string): DatabaseSync {
  try {
    if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
    const db = new DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS });
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF;');
    return db;
  } catch (error) {
    throw new Error(`cannot open the history store ${path}: ${(error as Error).message}`, { cause: error });
  }
}

function migrate(db: DatabaseSync, path: string): void {
  try {
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec('CREATE TABLE IF NOT EXISTS history_schema (version INTEGER NOT NULL)');
      const row = db.prepare('SELECT max(version) AS v FROM history_schema').get() as { v: number | null };
      const found = row.v ?? 0;
      if (found > SCHEMA_VERSION) throw new SchemaTooNewError(path, found);
      for (let v = found + 1; v <= SCHEMA_VERSION; v++) for (const sql of SQLITE_STEPS[v - 1]) db.exec(sql);
      if (found < SCHEMA_VERSION) {
        db.exec('DELETE FROM history_schema');
        db.prepare('INSERT INTO history_schema (version) VALUES (?)').run(SCHEMA_VERSION);
      }
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
  } catch (error) {
    if (error instanceof SchemaTooNewError) throw error;
    throw new Error(`cannot open the history store ${path}: ${(error as Error).message}`, { cause: error });
  }
}

export function openSqliteBackend(path: string, hook?: FillHook): Backend {
  const db = openDatabase(path);
  try {
    migrate(db, path);
  } catch (error) {
    db.close();
    throw error;
  }
  const ids = new Map<string, number>();
  const stmts = new Map<string, StatementSync>();
  const st = (sql: string): StatementSync => {
    let s = stmts.get(sql);
    if (s === undefined) {
      s = db.prepare(sql);
      stmts.set(sql, s);
    }
    return s;
  };
  // Row arrays instead of objects: reads of thousands of bars are the hot path.
  const arrays = (sql: string): StatementSync => {
    const key = `arrays:${sql}`;
    let s = stmts.get(key);
    if (s === undefined) {
      s = db.prepare(sql);
      s.setReturnArrays(true);
      stmts.set(key, s);
    }
    return s;
  };
  const keyOf = (k: SeriesKey) => `${k.adapter}\u0000${k.symbol}\u0000${k.period}`;

  const seriesId = (k: SeriesKey, create: boolean): number | undefined => {
    const cached = ids.get(keyOf(k));
    if (cached !== undefined) return cached;
    const row = st('SELECT id FROM series WHERE adapter = ? AND symbol = ? AND period = ?').get(k.adapter, k.symbol, k.period) as { id: number } | undefined;
    if (row !== undefined) {
      ids.set(keyOf(k), row.id);
      return row.id;
    }
    if (!create) return undefined;
    const result = st('INSERT INTO series (adapter, symbol, period) VALUES (?, ?, ?)').run(k.adapter, k.symbol, k.period);
    const id = Number(result.lastInsertRowid);
    ids.set(keyOf(k), id);
    return id;
  };

  const coverageOf = (id: number): Segment[] =>
    (st('SELECT lo, hi, recheck_at FROM coverage WHERE series = ? ORDER BY lo').all(id) as { lo: number; hi: number; recheck_at: number | null }[])
      .map((r) => ({ lo: r.lo, hi: r.hi, recheckAt: r.recheck_at }));

  const writeCoverage = (id: number, segments: readonly Segment[]) => {
    st('DELETE FROM coverage WHERE series = ?').run(id);
    const insert = st('INSERT INTO coverage (series, lo, hi, recheck_at) VALUES (?, ?, ?, ?)');
    for (const s of segments) insert.run(id, s.lo, s.hi, s.recheckAt);
  };

  const transaction = <T>(work: () => T): T => {
    db.exec('BEGIN IMMEDIATE');
    try {
      const out = work();
      db.exec('COMMIT');
      return out;
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    }
  };

  const matching = (f: DropFilter): { id: number; period: string }[] => {
    const where: string[] = [];
    const args: string[] = [];
    if (f.adapter !== undefined) { where.push('adapter = ?'); args.push(f.adapter); }
    if (f.symbol !== undefined) { where.push('symbol = ?'); args.push(f.symbol); }
    if (f.period !== undefined) { where.push('period = ?'); args.push(f.period); }
    const sql = `SELECT id, period FROM series${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}`;
    return db.prepare(sql).all(...args) as { id: number; period: string }[];
  };

  const dropRange = (id: number, from: number, to: number): number => {
    const deleted = Number(st('DELETE FROM bars WHERE series = ? AND ts BETWEEN ? AND ?').run(id, from, to).changes);
    writeCoverage(id, cut(coverageOf(id), from, to));
    return deleted;
  };

  const sizeBytes = (): number => {
    const pages = db.prepare('PRAGMA page_count').get() as { page_count: number };
    const free = db.prepare('PRAGMA freelist_count').get() as { freelist_count: number };
    const size = db.prepare('PRAGMA page_size').get() as { page_size: number };
    return (pages.page_count - free.freelist_count) * size.page_size;
  };

  return {
    kind: 'sqlite',
    location: path,

    async coverage(key) {
      const id = seriesId(key, false);
      return id === undefined ? [] : coverageOf(id);
    },

    async read(key, lo, hi, newest) {
      const id = seriesId(key, false);
      if (id === undefined) return rowsToColumns([]);
      const cols = 'ts, open, high, low, close, volume, amount, prev_close, scaled';
      if (newest === undefined) {
        return rowsToColumns(arrays(`SELECT ${cols} FROM bars WHERE series = ? AND ts BETWEEN ? AND ? ORDER BY ts`).all(id, lo, hi) as unknown as Row[]);
      }
      const rows = arrays(`SELECT ${cols} FROM bars WHERE series = ? AND ts BETWEEN ? AND ? ORDER BY ts DESC LIMIT ?`).all(id, lo, hi, newest) as unknown as Row[];
      return rowsToColumns(rows.reverse());
    },

    async countBars(key, lo, hi) {
      const id = seriesId(key, false);
      if (id === undefined) return 0;
      return (st('SELECT count(*) AS n FROM bars WHERE series = ? AND ts BETWEEN ? AND ?').get(id, lo, hi) as { n: number }).n;
    },

    async fill({ key, bars, covers }: FillInput) {
      if (hook === undefined) {
        transaction(() => fillSync(key, bars, covers));
        return;
      }
      // The hook may be async (tests): run the same steps by hand around it.
      db.exec('BEGIN IMMEDIATE');
      try {
        const id = upsertBars(key, bars);
        await hook();
        writeCoverage(id, overlayAll(coverageOf(id), covers));
        db.exec('COMMIT');
      } catch (error) {
        if (db.isTransaction) db.exec('ROLLBACK');
        throw error;
      }
    },

    async drop(filter) {
      return transaction(() => {
        let deleted = 0;
        for (const s of matching(filter)) deleted += dropRange(s.id, filter.from ?? Number.MIN_SAFE_INTEGER, filter.to ?? Number.MAX_SAFE_INTEGER);
        return deleted;
      });
    },

    async prune(period: BasePeriod, before: number, signal?: AbortSignal) {
      // node:sqlite is synchronous: one DELETE over a big store held the event loop for seconds
      // (2.6 s measured on a 420 MB store, at boot). Series by series, PRUNE_CHUNK bars per
      // transaction, a turn of the loop between. Each transaction trims the series' coverage too,
      // so between chunks no coverage claims a bar that is gone (a fill that lands meanwhile is
      // trimmed by the next chunk).
      let deleted = 0;
      const ids = (st('SELECT id FROM series WHERE period = ?').all(period) as { id: number }[]).map((r) => r.id);
      for (const id of ids) {
        for (;;) {
          if (signal?.aborted === true) return deleted;
          const edge = st('SELECT ts FROM bars WHERE series = ? AND ts < ? ORDER BY ts LIMIT 1 OFFSET ?').get(id, before, PRUNE_CHUNK - 1) as { ts: number } | undefined;
          deleted += transaction(() => {
            const n = edge === undefined
              ? Number(st('DELETE FROM bars WHERE series = ? AND ts < ?').run(id, before).changes)
              : Number(st('DELETE FROM bars WHERE series = ? AND ts <= ?').run(id, edge.ts).changes);
            st('DELETE FROM coverage WHERE series = ? AND hi < ?').run(id, before);
            // Rows left that start before the cut all reach past it (and lo stays unique per series).
            st('UPDATE coverage SET lo = ? WHERE series = ? AND lo < ?').run(before, id, before);
            return n;
          });
          await yieldToLoop();
          if (edge === undefined) break;
        }
      }
      return deleted;
    },

    async stats(): Promise<HistoryStats> {
      const out = emptyStats('sqlite', path);
      const rows = db.prepare(`SELECT s.adapter, s.symbol, s.period,
          (SELECT count(*) FROM bars b WHERE b.series = s.id) AS bars,
          (SELECT count(*) FROM coverage c WHERE c.series = s.id) AS ranges
        FROM series s`).all() as { adapter: string; symbol: string; period: BasePeriod; bars: number; ranges: number }[];
      tallySeries(out, rows);
      out.bytes = sizeBytes();
      return out;
    },

    async sizeBytes() {
      return sizeBytes();
    },

    async close() {
      if (db.isOpen) db.close();
    },
  };

  function upsertBars(key: SeriesKey, bars: Candles): number {
    const id = seriesId(key, true) as number;
    // Many rows per statement: one run() costs about as much as the row it inserts, so
    // UPSERT_ROWS rows a run halve the CPU of a big fill (BENCHMARKS.md, cold requests).
    const n = bars.timestamp.length;
    const full = Math.floor(n / UPSERT_ROWS) * UPSERT_ROWS;
    const many = full > 0 ? st(upsertSql(UPSERT_ROWS)) : undefined;
    const one = full < n ? st(upsertSql(1)) : undefined;
    const prev = bars.prev_close;
    const values: (number | null)[] = new Array(UPSERT_ROWS * 10);
    let at = 0;
    for (let i = 0; i < n; i++) {
      const p = prev === undefined ? null : prev[i];
      const prices = exact(bars.open[i], PRICE_SCALE) && exact(bars.high[i], PRICE_SCALE) && exact(bars.low[i], PRICE_SCALE)
        && exact(bars.close[i], PRICE_SCALE) && (p === null || exact(p, PRICE_SCALE));
      const amount = exact(bars.amount[i], AMOUNT_SCALE);
      const px = (x: number) => (prices ? Math.round(x * PRICE_SCALE) : x);
      values[at++] = id;
      values[at++] = bars.timestamp[i];
      values[at++] = px(bars.open[i]);
      values[at++] = px(bars.high[i]);
      values[at++] = px(bars.low[i]);
      values[at++] = px(bars.close[i]);
      values[at++] = bars.volume[i];
      values[at++] = amount ? Math.round(bars.amount[i] * AMOUNT_SCALE) : bars.amount[i];
      values[at++] = p === null ? null : px(p);
      values[at++] = (prices ? 1 : 0) | (amount ? 2 : 0);
      if (i < full) {
        if (at === values.length) {
          many!.run(...values);
          at = 0;
        }
      } else {
        one!.run(...values.slice(0, 10));
        at = 0;
      }
    }
    return id;
  }

  function fillSync(key: SeriesKey, bars: Candles, covers: readonly Segment[]): void {
    const id = upsertBars(key, bars);
    writeCoverage(id, overlayAll(coverageOf(id), covers));
  }
}
