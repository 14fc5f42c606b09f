// The embedded backend: one SQLite file through Node 24's built-in node:sqlite (no native build,
// nothing downloaded at install). Synchronous calls are short (indexed range reads, one
// transaction per fill); WAL lets the CLI read and warm while the server runs, busy_timeout makes
// two writers wait for each other instead of failing.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { BasePeriod, Candles } from '../domain.ts';
import { sliceCandles } from '../candles/window.ts';
import { assemble, blockOf, blockRuns, countIn, cutBlock, decodeBlock, decodeTimestamps, encodeBlock, mergeBlock, type BlockBars } from './blocks.ts';
import { cut, overlayAll, type Segment } from './coverage.ts';
import type { StoredWindow } from './backend.ts';
import {
  emptyStats, logConversion, tallySeries, type Backend, type MigrationLog, type DropFilter, type FillHook, type FillInput, type HistoryStats, type ReferenceRow, type SeriesKey, type PruneScope,
} from './backend.ts';
import { SCHEMA_VERSION, SchemaTooNewError, SQLITE_STEPS } from './schema.ts';

const BUSY_TIMEOUT_MS = 10_000;
/** Version-1 rows stored prices × 1000 (bit 1 of `scaled`) and amounts × 100 (bit 2) where exact. */
const V1_PRICE_SCALE = 1000;
const V1_AMOUNT_SCALE = 100;
/** Blocks a retention transaction deletes before the event loop gets a turn (~7,000–12,000 1m bars). */
const PRUNE_CHUNK_BLOCKS = 32;
/** Series ids looked at by one statement of a retention pass (a turn of the event loop between pages). */
const PRUNE_SERIES_PAGE = 4096;
/** The write probe's row (a reference kind nothing reads) and its size: about what a fill of a few blocks needs. */
const WRITE_PROBE_KIND = 'probe';
const WRITE_PROBE_BYTES = 65_536;

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

/** ts, open, high, low, close, volume, amount, prev_close, scaled: a version-1 bar row. */
type V1Row = [number, number, number, number, number, number, number, number | null, number];

/** Schema step 2: every version-1 bar row into its block, in the migration's transaction; returns the bars moved. */
function convertV1(db: DatabaseSync): number {
  let moved = 0;
  const periods = new Map<number, BasePeriod>();
  for (const r of db.prepare('SELECT id, period FROM series').all() as { id: number; period: BasePeriod }[]) periods.set(r.id, r.period);
  const insert = db.prepare('INSERT INTO blocks (series, block, n, data) VALUES (?, ?, ?, ?)');
  for (const id of periods.keys()) {
    const period = periods.get(id) as BasePeriod;
    const rows = db.prepare('SELECT ts, open, high, low, close, volume, amount, prev_close, scaled FROM bars WHERE series = ? ORDER BY ts');
    rows.setReturnArrays(true);
    let pending: V1Row[] = [];
    let block = Number.NaN;
    const flush = () => {
      if (pending.length === 0) return;
      insert.run(id, block, pending.length, encodeBlock(v1Columns(pending)));
      moved += pending.length;
      pending = [];
    };
    for (const row of rows.iterate(id) as Iterable<unknown>) {
      const r = row as V1Row;
      const b = blockOf(period, Number(r[0]));
      if (b !== block) {
        flush();
        block = b;
      }
      pending.push(r);
    }
    flush();
  }
  db.exec('DROP TABLE bars');
  return moved;
}

function v1Columns(rows: readonly V1Row[]): BlockBars {
  const n = rows.length;
  const c = { timestamp: new Array<number>(n), open: new Array<number>(n), high: new Array<number>(n), low: new Array<number>(n), close: new Array<number>(n), volume: new Array<number>(n), amount: new Array<number>(n), prev_close: new Array<number>(n) };
  for (let i = 0; i < n; i++) {
    const [ts, open, high, low, close, volume, amount, prevClose, scaled] = rows[i];
    const k = (scaled & 1) !== 0 ? V1_PRICE_SCALE : 1;
    c.timestamp[i] = Number(ts);
    c.open[i] = open / k;
    c.high[i] = high / k;
    c.low[i] = low / k;
    c.close[i] = close / k;
    c.volume[i] = Number(volume);
    c.amount[i] = (scaled & 2) !== 0 ? amount / V1_AMOUNT_SCALE : amount;
    c.prev_close[i] = prevClose === null ? Number.NaN : prevClose / k;
  }
  return c;
}

/** Applies the schema steps above the store's version; the bars a conversion moved, if one ran. */
function migrate(db: DatabaseSync, path: string): number | undefined {
  let converted: number | undefined;
  try {
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec('CREATE TABLE IF NOT EXISTS history_schema (version INTEGER NOT NULL)');
      const row = db.prepare('SELECT max(version) AS v FROM history_schema').get() as { v: number | null };
      const found = row.v ?? 0;
      if (found > SCHEMA_VERSION) throw new SchemaTooNewError(path, found);
      for (let v = found + 1; v <= SCHEMA_VERSION; v++) {
        for (const sql of SQLITE_STEPS[v - 1]) db.exec(sql);
        if (v === 2 && found >= 1) converted = convertV1(db);
        else if (v === 2) db.exec('DROP TABLE bars');
      }
      if (found < SCHEMA_VERSION) {
        db.exec('DELETE FROM history_schema');
        db.prepare('INSERT INTO history_schema (version) VALUES (?)').run(SCHEMA_VERSION);
      }
      db.exec('COMMIT');
      return converted;
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
  } catch (error) {
    if (error instanceof SchemaTooNewError) throw error;
    throw new Error(`cannot open the history store ${path}: ${(error as Error).message}`, { cause: error });
  }
}

export function openSqliteBackend(path: string, hook?: FillHook, log?: MigrationLog): Backend {
  const db = openDatabase(path);
  try {
    const started = performance.now();
    const converted = migrate(db, path);
    if (converted !== undefined) logConversion(log, path, converted, performance.now() - started);
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
  const keyOf = (k: SeriesKey) => `${k.adapter}\u0000${k.symbol}\u0000${k.period}`;

  const seriesId = (k: SeriesKey, create: boolean): number | undefined => {
    const cached = ids.get(keyOf(k));
    if (cached !== undefined) return cached;
    const row = st('SELECT id FROM series WHERE adapter = ? AND symbol = ? AND period = ?').get(k.adapter, k.symbol, k.period) as { id: number } | undefined;
    let id = row?.id;
    if (id === undefined) {
      if (!create) return undefined;
      id = Number(st('INSERT INTO series (adapter, symbol, period) VALUES (?, ?, ?)').run(k.adapter, k.symbol, k.period).lastInsertRowid);
    }
    ids.set(keyOf(k), id);
    return id;
  };

  let windowStatement: StatementSync | undefined;
  const windowRows = (): StatementSync => {
    if (windowStatement === undefined) {
      windowStatement = db.prepare(`SELECT 0, lo, hi, recheck_at, NULL FROM coverage WHERE series = ?1
        UNION ALL SELECT 1, block, NULL, NULL, data FROM blocks WHERE series = ?1 AND block BETWEEN ?2 AND ?3 ORDER BY 1, 2`);
      windowStatement.setReturnArrays(true);
    }
    return windowStatement;
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

  const matching = (f: DropFilter): { id: number; period: BasePeriod }[] => {
    const where: string[] = [];
    const args: string[] = [];
    if (f.adapter !== undefined) { where.push('adapter = ?'); args.push(f.adapter); }
    if (f.symbol !== undefined) { where.push('symbol = ?'); args.push(f.symbol); }
    if (f.period !== undefined) { where.push('period = ?'); args.push(f.period); }
    const sql = `SELECT id, period FROM series${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}`;
    return db.prepare(sql).all(...args) as { id: number; period: BasePeriod }[];
  };

  const putBlock = (id: number, block: number, bars: Candles, from = 0, to = bars.timestamp.length) => {
    if (to <= from) st('DELETE FROM blocks WHERE series = ? AND block = ?').run(id, block);
    else st('INSERT OR REPLACE INTO blocks (series, block, n, data) VALUES (?, ?, ?, ?)').run(id, block, to - from, encodeBlock(bars, from, to));
  };

  /**
   * Removes the bars labelled in [from, to] from series `id`, touching at most `maxBlocks` blocks
   * (oldest first); `done` once none in the range is left. Inner blocks go whole by their count;
   * only the two edge blocks are opened and rewritten.
   */
  const removeBars = (id: number, period: BasePeriod, from: number, to: number, maxBlocks = -1): { removed: number; done: boolean } => {
    const bf = blockOf(period, from);
    const bt = blockOf(period, to);
    const rows = st('SELECT block, n FROM blocks WHERE series = ? AND block BETWEEN ? AND ? ORDER BY block LIMIT ?').all(id, bf, bt, maxBlocks) as { block: number; n: number }[];
    let removed = 0;
    let innerLo = Infinity;
    let innerHi = -Infinity;
    for (const row of rows) {
      if (row.block > bf && row.block < bt) {
        innerLo = Math.min(innerLo, row.block);
        innerHi = Math.max(innerHi, row.block);
        removed += row.n;
        continue;
      }
      const data = (st('SELECT data FROM blocks WHERE series = ? AND block = ?').get(id, row.block) as { data: Uint8Array }).data;
      const { kept, removed: r } = cutBlock(decodeBlock(data), from, to);
      if (r > 0) putBlock(id, row.block, kept);
      removed += r;
    }
    if (innerLo <= innerHi) st('DELETE FROM blocks WHERE series = ? AND block BETWEEN ? AND ?').run(id, innerLo, innerHi);
    return { removed, done: maxBlocks < 0 || rows.length < maxBlocks };
  };

  const dropRange = (id: number, period: BasePeriod, from: number, to: number): number => {
    const { removed } = removeBars(id, period, from, to);
    writeCoverage(id, cut(coverageOf(id), from, to));
    return removed;
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

    async windowsOf(adapter, period, symbols, lo, hi) {
      const statement = st(`SELECT s.symbol, 0, c.lo, c.hi, c.recheck_at, NULL FROM series s JOIN coverage c ON c.series = s.id
          WHERE s.adapter = ?1 AND s.period = ?2 AND s.symbol IN (SELECT value FROM json_each(?3)) AND c.hi >= ?4 AND c.lo <= ?5
        UNION ALL SELECT s.symbol, 1, b.block, NULL, NULL, b.data FROM series s JOIN blocks b ON b.series = s.id
          WHERE s.adapter = ?1 AND s.period = ?2 AND s.symbol IN (SELECT value FROM json_each(?3)) AND b.block BETWEEN ?6 AND ?7
        ORDER BY 1, 2, 3`);
      statement.setReturnArrays(true);
      const rows = statement.all(adapter, period, JSON.stringify(symbols), lo, hi, blockOf(period, lo), blockOf(period, hi)) as unknown as [string, number, number, number | null, number | null, Uint8Array | null][];
      const out = new Map<string, StoredWindow>();
      for (const values of rows) {
        let w = out.get(values[0]);
        if (w === undefined) {
          w = { coverage: [], blocks: [] };
          out.set(values[0], w);
        }
        if (values[1] === 0) w.coverage.push({ lo: values[2], hi: values[3] as number, recheckAt: values[4] });
        else w.blocks.push({ block: values[2], data: values[5] as Uint8Array });
      }
      return out;
    },

    async listSeries(filter) {
      const where: string[] = [];
      const args: string[] = [];
      if (filter.adapter !== undefined) { where.push('adapter = ?'); args.push(filter.adapter); }
      if (filter.period !== undefined) { where.push('period = ?'); args.push(filter.period); }
      if (filter.symbols !== undefined) { where.push('symbol IN (SELECT value FROM json_each(?))'); args.push(JSON.stringify(filter.symbols)); }
      const sql = `SELECT adapter, symbol, period FROM series${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY symbol, period, adapter`;
      return (db.prepare(sql).all(...args) as { adapter: string; symbol: string; period: BasePeriod }[]).map((r) => ({ adapter: r.adapter, symbol: r.symbol, period: r.period }));
    },

    async read(key, lo, hi, newest) {
      const id = seriesId(key, false);
      if (id === undefined) return assemble([], lo, hi);
      const bl = blockOf(key.period, lo);
      const bh = blockOf(key.period, hi);
      if (newest === undefined) {
        const rows = st('SELECT data FROM blocks WHERE series = ? AND block BETWEEN ? AND ? ORDER BY block').all(id, bl, bh) as { data: Uint8Array }[];
        return assemble(rows.map((r) => decodeBlock(r.data)), lo, hi);
      }
      // Newest first, stopping once enough bars in [lo, hi] are decoded.
      const picked: BlockBars[] = [];
      let got = 0;
      for (const row of st('SELECT data FROM blocks WHERE series = ? AND block BETWEEN ? AND ? ORDER BY block DESC').iterate(id, bl, bh) as Iterable<{ data: Uint8Array }>) {
        const b = decodeBlock(row.data);
        picked.push(b);
        got += countIn(b.timestamp, lo, hi);
        if (got >= newest) break;
      }
      return assemble(picked.reverse(), lo, hi, newest);
    },

    async window(key, lo, hi) {
      const id = seriesId(key, false);
      if (id === undefined) return undefined;
      // One statement, so one snapshot: the coverage rows (kind 0) then the blocks (kind 1), as arrays.
      const rows = windowRows().all(id, blockOf(key.period, lo), blockOf(key.period, hi)) as unknown as [number, number, number | null, number | null, Uint8Array | null][];
      const coverage: Segment[] = [];
      const blocks: { block: number; data: Uint8Array }[] = [];
      for (const r of rows) {
        if (r[0] === 0) coverage.push({ lo: r[1], hi: r[2] as number, recheckAt: r[3] });
        else blocks.push({ block: r[1], data: r[4] as Uint8Array });
      }
      return { coverage, blocks };
    },

    async countBars(key, lo, hi) {
      const id = seriesId(key, false);
      if (id === undefined) return 0;
      const bl = blockOf(key.period, lo);
      const bh = blockOf(key.period, hi);
      // Whole blocks by their count; only the two edge blocks are opened.
      const inner = bh - bl > 1
        ? (st('SELECT coalesce(sum(n), 0) AS n FROM blocks WHERE series = ? AND block > ? AND block < ?').get(id, bl, bh) as { n: number }).n
        : 0;
      let edges = 0;
      for (const row of st('SELECT data FROM blocks WHERE series = ? AND block IN (?, ?)').all(id, bl, bh) as { data: Uint8Array }[]) {
        edges += countIn(decodeTimestamps(row.data), lo, hi);
      }
      return inner + edges;
    },

    async fill({ key, bars, covers }: FillInput) {
      if (hook === undefined) {
        transaction(() => fillSync(key, bars, covers));
        return;
      }
      // The hook may be async (tests): run the same steps by hand around it.
      db.exec('BEGIN IMMEDIATE');
      try {
        const id = writeBars(key, bars);
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
        for (const s of matching(filter)) deleted += dropRange(s.id, s.period, filter.from ?? Number.MIN_SAFE_INTEGER, filter.to ?? Number.MAX_SAFE_INTEGER);
        return deleted;
      });
    },

    async prune(period: BasePeriod, before: number, signal?: AbortSignal, scope: PruneScope = 'adhoc') {
      // node:sqlite is synchronous: one DELETE over a big store held the event loop for seconds
      // (2.6 s measured on a 420 MB store, at boot). Series by series, PRUNE_CHUNK_BLOCKS blocks
      // per transaction, a turn of the loop between. Each transaction trims the series' coverage
      // too, so between chunks no coverage claims a bar that is gone (a fill that lands meanwhile
      // is trimmed by the next chunk).
      // Only the series with a block at or before the cut's block, or coverage before the cut,
      // have anything to remove: found by one statement per page of series ids (index lookups
      // inside SQLite), a turn of the loop between pages. Visiting every series with a
      // transaction and a turn of its own took 0.6–0.9 s a pass over 20,000 series with nothing
      // to remove (BENCHMARKS.md, startup).
      let deleted = 0;
      const lastBlock = blockOf(period, before - 1);
      // Recorded series (ledger 'series') keep the recorder's retention; the others the store's.
      const recorded = `EXISTS (SELECT 1 FROM ledger l WHERE l.kind = 'series' AND l.day = '' AND l.name = s.adapter || '/' || s.symbol || '/' || s.period)`;
      const due = st(`SELECT s.id FROM series s WHERE s.period = ? AND s.id > ? AND ${scope === 'recorded' ? recorded : `NOT ${recorded}`}
          AND (EXISTS (SELECT 1 FROM blocks b WHERE b.series = s.id AND b.block <= ?)
            OR EXISTS (SELECT 1 FROM coverage c WHERE c.series = s.id AND c.lo < ?))
        ORDER BY s.id LIMIT ${PRUNE_SERIES_PAGE}`);
      let after = -1;
      for (;;) {
        const page = (due.all(period, after, lastBlock, before) as { id: number }[]).map((r) => r.id);
        for (const id of page) {
          for (;;) {
            if (signal?.aborted === true) return deleted;
            const step = transaction(() => {
              const out = removeBars(id, period, Number.MIN_SAFE_INTEGER, before - 1, PRUNE_CHUNK_BLOCKS);
              st('DELETE FROM coverage WHERE series = ? AND hi < ?').run(id, before);
              // Rows left that start before the cut all reach past it (and lo stays unique per series).
              st('UPDATE coverage SET lo = ? WHERE series = ? AND lo < ?').run(before, id, before);
              return out;
            });
            deleted += step.removed;
            await yieldToLoop();
            if (step.done) break;
          }
        }
        if (page.length < PRUNE_SERIES_PAGE) return deleted;
        after = page[page.length - 1];
        await yieldToLoop();
        if (signal?.aborted === true) return deleted;
      }
    },

    async ledgerPut(kind, rows) {
      if (rows.length === 0) return;
      const put = st('INSERT OR REPLACE INTO ledger (kind, name, day, updated_at, data) VALUES (?, ?, ?, ?, ?)');
      transaction(() => {
        for (const row of rows) put.run(kind, row.name, row.day, row.updatedAt, row.data);
      });
    },

    async ledgerGet(kind, q) {
      const where = ['kind = ?'];
      const args: string[] = [kind];
      if (q.name !== undefined) { where.push('name = ?'); args.push(q.name); }
      if (q.prefix !== undefined) { where.push('substr(name, 1, ?) = ?'); args.push(String(q.prefix.length), q.prefix); }
      if (q.from !== undefined) { where.push('day >= ?'); args.push(q.from); }
      if (q.to !== undefined) { where.push('day <= ?'); args.push(q.to); }
      const base = `SELECT name, day, updated_at, data FROM ledger WHERE ${where.join(' AND ')}`;
      // One pass: with a lone max() or min(), SQLite takes the other columns from the row holding it.
      const pick = q.last === true ? 'max' : q.first === true ? 'min' : undefined;
      const sql = pick !== undefined
        ? `SELECT name, ${pick}(day) AS day, updated_at, data FROM ledger WHERE ${where.join(' AND ')} GROUP BY name ORDER BY name`
        : `${base} ORDER BY name, day`;
      const params = args;
      return (db.prepare(sql).all(...params) as { name: string; day: string; updated_at: number; data: string }[])
        .map((r) => ({ name: r.name, day: r.day, updatedAt: Number(r.updated_at), data: r.data }));
    },

    async referenceGet(kind, adapter, symbols) {
      const get = st('SELECT fetched_at, data FROM reference WHERE kind = ? AND adapter = ? AND symbol = ?');
      const out: ReferenceRow[] = [];
      for (const symbol of symbols) {
        const row = get.get(kind, adapter, symbol) as { fetched_at: number; data: string } | undefined;
        if (row !== undefined) out.push({ symbol, fetchedAt: Number(row.fetched_at), data: row.data });
      }
      return out;
    },

    async referencePut(kind, adapter, rows) {
      if (rows.length === 0) return;
      const put = st('INSERT OR REPLACE INTO reference (kind, adapter, symbol, fetched_at, data) VALUES (?, ?, ?, ?, ?)');
      transaction(() => {
        for (const row of rows) put.run(kind, adapter, row.symbol, row.fetchedAt, row.data);
      });
    },

    async stats(): Promise<HistoryStats> {
      const out = emptyStats('sqlite', path);
      const rows = db.prepare(`SELECT s.adapter, s.symbol, s.period,
          (SELECT coalesce(sum(n), 0) FROM blocks b WHERE b.series = s.id) AS bars,
          (SELECT count(*) FROM coverage c WHERE c.series = s.id) AS ranges
        FROM series s`).all() as { adapter: string; symbol: string; period: BasePeriod; bars: number; ranges: number }[];
      tallySeries(out, rows);
      out.bytes = sizeBytes();
      return out;
    },

    async sizeBytes() {
      return sizeBytes();
    },

    async probe(options) {
      if (options?.write === true) {
        // On the server's connection (the one whose fills failed): a blob that needs new pages,
        // written and deleted in one committed transaction. A no-op update would pass on a full
        // disk (it rewrites a page in place); this fails there with SQLITE_FULL as a fill does.
        transaction(() => {
          st(`INSERT OR REPLACE INTO reference (kind, adapter, symbol, fetched_at, data) VALUES ('${WRITE_PROBE_KIND}', '', '', 0, zeroblob(${WRITE_PROBE_BYTES}))`).run();
          st(`DELETE FROM reference WHERE kind = '${WRITE_PROBE_KIND}'`).run();
        });
        return;
      }
      // A fresh read-only connection reads from the file, not from the page cache the server's
      // connection keeps: the header, the schema and the first page of each table (cheap: a
      // handful of page reads, whatever the store's size).
      if (path === ':memory:') return;
      const reader = new DatabaseSync(path, { readOnly: true, timeout: BUSY_TIMEOUT_MS });
      try {
        reader.exec('SELECT 1 FROM series LIMIT 1; SELECT 1 FROM coverage LIMIT 1; SELECT 1 FROM blocks LIMIT 1;');
        reader.prepare('SELECT 1 FROM blocks ORDER BY rowid DESC LIMIT 1').get();
      } finally {
        reader.close();
      }
    },

    async close() {
      if (db.isOpen) db.close();
    },
  };

  /** Upserts validated bars block by block: a block already held is merged, new bars winning. */
  function writeBars(key: SeriesKey, bars: Candles): number {
    const id = seriesId(key, true) as number;
    const runs = blockRuns(key.period, bars.timestamp);
    if (runs.length === 0) return id;
    const held = new Map<number, Uint8Array>();
    const rows = st('SELECT block, data FROM blocks WHERE series = ? AND block BETWEEN ? AND ?').all(id, runs[0].block, runs[runs.length - 1].block) as { block: number; data: Uint8Array }[];
    for (const row of rows) held.set(row.block, row.data);
    for (const run of runs) {
      const old = held.get(run.block);
      if (old === undefined) putBlock(id, run.block, bars, run.from, run.to);
      else putBlock(id, run.block, mergeBlock(decodeBlock(old), sliceCandles(bars, run.from, run.to)));
    }
    return id;
  }

  function fillSync(key: SeriesKey, bars: Candles, covers: readonly Segment[]): void {
    const id = writeBars(key, bars);
    writeCoverage(id, overlayAll(coverageOf(id), covers));
  }
}
