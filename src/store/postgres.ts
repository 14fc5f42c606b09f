// The shared backend: PostgreSQL through `pg`, for several instances that share one history.
// Every fill is one transaction that first locks its series row (SELECT … FOR UPDATE), so two
// instances filling the same series serialise their coverage updates; bars are upserted on the
// (series, ts) key, so overlapping fills neither duplicate nor lose bars. A client killed mid-fill
// leaves an open transaction that PostgreSQL rolls back when the connection drops.
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { BasePeriod, Candles } from '../domain.ts';
import { sliceCandles } from '../candles/window.ts';
import { assemble, blockOf, blockRuns, countIn, cutBlock, decodeBlock, decodeTimestamps, encodeBlock, mergeBlock, type BlockBars } from './blocks.ts';
import { cut, overlayAll, type Segment } from './coverage.ts';
import type { StoredWindow } from './backend.ts';
import {
  emptyStats, logConversion, tallySeries, type Backend, type MigrationLog, type DropFilter, type FillHook, type HistoryStats, type ReferenceRow, type SeriesCount, type SeriesKey, type PruneScope,
} from './backend.ts';
import { POSTGRES_STEPS, SCHEMA_VERSION, SchemaTooNewError } from './schema.ts';
import { CopyReader, copyOutBinary, sqlInt } from './pg-copy.ts';
import type { SeriesLock } from './series-lock.ts';

const INT8 = 20;
// Timestamps and volumes are bigint; every value we store is below 2^53, so numbers are exact.
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === INT8 ? (v: string) => Number(v) : (pg.types.getTypeParser as (o: number, f?: string) => unknown)(oid, format),
};

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return 'DATABASE_URL';
  }
}

type Queryable = pg.Pool | pg.PoolClient;

/** Longest a readiness probe of the store takes, connecting included. */
const PROBE_TIMEOUT_MS = 1000;

export async function openPostgresBackend(databaseUrl: string, schema = 'mdqs_history', hook?: FillHook, log?: MigrationLog): Promise<Backend> {
  const location = `${redactUrl(databaseUrl)} schema ${schema}`;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 8, connectionTimeoutMillis: 5000, types: types as pg.CustomTypesConfig });
  // An idle client's error (server restart) must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  const s = quoteIdent(schema);
  try {
    const client = await pool.connect();
    const started = performance.now();
    let converted: number | undefined;
    try {
      await client.query('BEGIN');
      // Two instances booting at once: one migrates, the other waits and then finds it done.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`mdqs_history:${schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${s}.history_schema (version integer NOT NULL)`);
      const found = Number((await client.query(`SELECT coalesce(max(version), 0) AS v FROM ${s}.history_schema`)).rows[0].v);
      if (found > SCHEMA_VERSION) throw new SchemaTooNewError(location, found);
      for (let v = found + 1; v <= SCHEMA_VERSION; v++) {
        for (const sql of POSTGRES_STEPS[v - 1]) await client.query(sql.replaceAll('%s', s));
        if (v === 2 && found >= 1) converted = await convertV1(client, s);
        else if (v === 2) await client.query(`DROP TABLE ${s}.bars`);
      }
      if (found < SCHEMA_VERSION) {
        await client.query(`DELETE FROM ${s}.history_schema`);
        await client.query(`INSERT INTO ${s}.history_schema (version) VALUES ($1)`, [SCHEMA_VERSION]);
      }
      await client.query('COMMIT');
      if (converted !== undefined) logConversion(log, location, converted, performance.now() - started);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    if (error instanceof SchemaTooNewError) throw error;
    throw new Error(`cannot open the history store ${location}: ${(error as Error).message}`, { cause: error });
  }

  /** Series ids by adapter and period, then symbol (a whole market's are looked up at once). */
  const ids = new Map<string, Map<string, number>>();
  const idsOf = (adapter: string, period: BasePeriod): Map<string, number> => {
    const group = `${adapter}\u0000${period}`;
    let m = ids.get(group);
    if (m === undefined) {
      m = new Map();
      ids.set(group, m);
    }
    return m;
  };
  /**
   * Readiness's own connection, never one of the pool: fills that hold every pooled connection
   * (or wait for one) must not make the store look down, nor a probe wait behind them.
   */
  let probeClient: pg.Client | undefined;
  let probeClosed = false;

  const findId = async (q: Queryable, k: SeriesKey): Promise<number | undefined> => {
    const cached = idsOf(k.adapter, k.period).get(k.symbol);
    if (cached !== undefined) return cached;
    const r = await q.query(`SELECT id FROM ${s}.series WHERE adapter = $1 AND symbol = $2 AND period = $3`, [k.adapter, k.symbol, k.period]);
    if (r.rows.length === 0) return undefined;
    idsOf(k.adapter, k.period).set(k.symbol, r.rows[0].id as number);
    return r.rows[0].id as number;
  };

  /**
   * The ids of `adapter`'s series of `period` among `symbols` (id → symbol): from the cache, the
   * rest looked up in one statement. Series rows are never deleted, so a cached id stays right.
   */
  const seriesIds = async (adapter: string, period: BasePeriod, symbols: readonly string[]): Promise<Map<number, string>> => {
    const known = idsOf(adapter, period);
    const found = new Map<number, string>();
    const unknown: string[] = [];
    for (const symbol of symbols) {
      const id = known.get(symbol);
      if (id === undefined) unknown.push(symbol);
      else found.set(id, symbol);
    }
    if (unknown.length > 0) {
      const r = await pool.query({
        text: `SELECT id, symbol FROM ${s}.series WHERE adapter = $1 AND period = $2 AND symbol = ANY($3::text[])`,
        values: [adapter, period, unknown],
        rowMode: 'array',
      });
      for (const [id, symbol] of r.rows as [number, string][]) {
        known.set(symbol, id);
        found.set(id, symbol);
      }
    }
    return found;
  };

  const windowSql = `SELECT 0 AS kind, lo AS a, hi AS b, recheck_at AS c, NULL::bytea AS data FROM ${s}.coverage WHERE series = $1
    UNION ALL SELECT 1, block, NULL, NULL, data FROM ${s}.blocks WHERE series = $1 AND block BETWEEN $2 AND $3 ORDER BY 1, 2`;
  // A prepared statement's name is per connection and per text: the schema is in the text.
  const windowName = `mdqs_window_${createHash('sha1').update(windowSql).digest('hex').slice(0, 16)}`;

  const coverageOf = async (q: Queryable, id: number): Promise<Segment[]> =>
    (await q.query(`SELECT lo, hi, recheck_at FROM ${s}.coverage WHERE series = $1 ORDER BY lo`, [id])).rows
      .map((r) => ({ lo: r.lo as number, hi: r.hi as number, recheckAt: r.recheck_at as number | null }));

  const writeCoverage = async (q: Queryable, id: number, segments: readonly Segment[]) => {
    await q.query(`DELETE FROM ${s}.coverage WHERE series = $1`, [id]);
    if (segments.length === 0) return;
    await q.query(
      `INSERT INTO ${s}.coverage (series, lo, hi, recheck_at) SELECT $1, * FROM unnest($2::bigint[], $3::bigint[], $4::bigint[])`,
      [id, segments.map((x) => x.lo), segments.map((x) => x.hi), segments.map((x) => x.recheckAt)],
    );
  };

  const inTransaction = async <T>(work: (c: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const out = await work(client);
      await client.query('COMMIT');
      return out;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };

  const matching = async (q: Queryable, f: DropFilter): Promise<{ id: number; period: BasePeriod }[]> => {
    const where: string[] = [];
    const args: string[] = [];
    if (f.adapter !== undefined) { args.push(f.adapter); where.push(`adapter = $${args.length}`); }
    if (f.symbol !== undefined) { args.push(f.symbol); where.push(`symbol = $${args.length}`); }
    if (f.period !== undefined) { args.push(f.period); where.push(`period = $${args.length}`); }
    const r = await q.query(`SELECT id, period FROM ${s}.series${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY id FOR UPDATE`, args);
    return r.rows as { id: number; period: BasePeriod }[];
  };

  const putBlocks = async (q: Queryable, id: number, blocks: { block: number; bars: Candles; from?: number; to?: number }[]) => {
    const size = (b: { bars: Candles; from?: number; to?: number }) => (b.to ?? b.bars.timestamp.length) - (b.from ?? 0);
    const keep = blocks.filter((b) => size(b) > 0);
    const gone = blocks.filter((b) => size(b) <= 0).map((b) => b.block);
    if (gone.length > 0) await q.query(`DELETE FROM ${s}.blocks WHERE series = $1 AND block = ANY($2::integer[])`, [id, gone]);
    if (keep.length === 0) return;
    const data = keep.map((b) => {
      const bytes = encodeBlock(b.bars, b.from, b.to);
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    });
    await q.query(
      `INSERT INTO ${s}.blocks (series, block, n, data) SELECT $1, * FROM unnest($2::integer[], $3::integer[], $4::bytea[])
       ON CONFLICT (series, block) DO UPDATE SET n = excluded.n, data = excluded.data`,
      [id, keep.map((b) => b.block), keep.map(size), data],
    );
  };

  /** Removes the bars labelled in [from, to]: inner blocks whole, the two edge blocks rewritten. */
  const removeBars = async (q: Queryable, id: number, period: BasePeriod, from: number, to: number): Promise<number> => {
    const bf = blockOf(period, from);
    const bt = blockOf(period, to);
    const inner = await q.query(
      `WITH d AS (DELETE FROM ${s}.blocks WHERE series = $1 AND block > $2 AND block < $3 RETURNING n) SELECT coalesce(sum(n), 0)::bigint AS n FROM d`,
      [id, bf, bt]);
    let removed = inner.rows[0].n as number;
    const edges = await q.query(`SELECT block, data FROM ${s}.blocks WHERE series = $1 AND block = ANY($2::integer[])`, [id, [bf, bt]]);
    const rewrite: { block: number; bars: Candles }[] = [];
    for (const row of edges.rows as { block: number; data: Buffer }[]) {
      const { kept, removed: r } = cutBlock(decodeBlock(row.data), from, to);
      if (r > 0) rewrite.push({ block: row.block, bars: kept });
      removed += r;
    }
    await putBlocks(q, id, rewrite);
    return removed;
  };

  const dropRange = async (q: Queryable, id: number, period: BasePeriod, from: number, to: number): Promise<number> => {
    const removed = await removeBars(q, id, period, from, to);
    await writeCoverage(q, id, cut(await coverageOf(q, id), from, to));
    return removed;
  };

  const sizeBytes = async (): Promise<number> => {
    const r = await pool.query(
      `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind = 'r'`, [schema]);
    return r.rows[0].bytes as number;
  };

  return {
    kind: 'postgres',
    location,

    async coverage(key) {
      const id = await findId(pool, key);
      return id === undefined ? [] : coverageOf(pool, id);
    },

    async windowsOf(adapter, period, symbols, lo, hi) {
      const out = new Map<string, StoredWindow>();
      const series = await seriesIds(adapter, period, symbols);
      if (series.size === 0) return out;
      // One statement (one snapshot): the coverage rows (kind 0) and the blocks (kind 1) of the
      // series by id, each side one index scan over an array of ids (joining series by symbol
      // instead probed both tables once per series and cost 3-5 times the server's time), as a
      // binary COPY (pg-copy.ts). Rows: [series, kind, lo | block, hi, recheck_at, data].
      const list = `'{${[...series.keys()].map(sqlInt).join(',')}}'::integer[]`;
      const bytes = await copyOutBinary(pool, `COPY (
          SELECT c.series, 0, c.lo, c.hi, c.recheck_at, NULL::bytea FROM ${s}.coverage c
            WHERE c.series = ANY(${list}) AND c.hi >= ${sqlInt(lo)} AND c.lo <= ${sqlInt(hi)}
          UNION ALL SELECT b.series, 1, b.block::bigint, NULL::bigint, NULL::bigint, b.data FROM ${s}.blocks b
            WHERE b.series = ANY(${list}) AND b.block BETWEEN ${sqlInt(blockOf(period, lo))} AND ${sqlInt(blockOf(period, hi))}
        ) TO STDOUT (FORMAT binary)`);
      const rows = new CopyReader(bytes);
      while (rows.row(6)) {
        const symbol = series.get(rows.int4() as number) as string;
        const kind = rows.int4();
        const a = rows.int8() as number;
        const b = rows.int8();
        const c = rows.int8();
        const data = rows.bytes();
        let w = out.get(symbol);
        if (w === undefined) {
          w = { coverage: [], blocks: [] };
          out.set(symbol, w);
        }
        if (kind === 0) w.coverage.push({ lo: a, hi: b as number, recheckAt: c });
        else w.blocks.push({ block: a, data: data as Buffer });
      }
      // In no particular order from the statement: each series' coverage by lo, blocks ascending.
      for (const w of out.values()) {
        if (w.coverage.length > 1) w.coverage.sort((x, y) => x.lo - y.lo);
        if (w.blocks.length > 1) w.blocks.sort((x, y) => x.block - y.block);
      }
      return out;
    },

    async listSeries(filter) {
      const where: string[] = [];
      const args: unknown[] = [];
      if (filter.adapter !== undefined) { args.push(filter.adapter); where.push(`adapter = $${args.length}`); }
      if (filter.period !== undefined) { args.push(filter.period); where.push(`period = $${args.length}`); }
      if (filter.symbols !== undefined) { args.push([...filter.symbols]); where.push(`symbol = ANY($${args.length}::text[])`); }
      const r = await pool.query(`SELECT adapter, symbol, period FROM ${s}.series${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY symbol, period, adapter`, args);
      return (r.rows as { adapter: string; symbol: string; period: BasePeriod }[]).map((row) => ({ adapter: row.adapter, symbol: row.symbol, period: row.period }));
    },

    async read(key, lo, hi, newest) {
      const id = await findId(pool, key);
      if (id === undefined) return assemble([], lo, hi);
      const bl = blockOf(key.period, lo);
      const bh = blockOf(key.period, hi);
      if (newest === undefined) {
        const r = await pool.query(`SELECT data FROM ${s}.blocks WHERE series = $1 AND block BETWEEN $2 AND $3 ORDER BY block`, [id, bl, bh]);
        return assemble((r.rows as { data: Buffer }[]).map((row) => decodeBlock(row.data)), lo, hi);
      }
      // Newest first, in growing pages, until enough bars in [lo, hi] are decoded.
      const picked: BlockBars[] = [];
      let got = 0;
      let top = bh;
      for (let page = 8; got < newest && top >= bl; page *= 2) {
        const r = await pool.query(
          `SELECT block, data FROM ${s}.blocks WHERE series = $1 AND block BETWEEN $2 AND $3 ORDER BY block DESC LIMIT $4`, [id, bl, top, page]);
        const rows = r.rows as { block: number; data: Buffer }[];
        for (const row of rows) {
          if (got >= newest) break;
          const b = decodeBlock(row.data);
          picked.push(b);
          got += countIn(b.timestamp, lo, hi);
        }
        if (rows.length < page) break;
        top = rows[rows.length - 1].block - 1;
      }
      return assemble(picked.reverse(), lo, hi, newest);
    },

    async window(key, lo, hi) {
      const id = await findId(pool, key);
      if (id === undefined) return undefined;
      // One statement (one round trip, one snapshot): the coverage rows (kind 0), then the blocks
      // (kind 1); prepared once per connection. Rows as arrays: [kind, lo | block, hi, recheck_at, data].
      const r = await pool.query({ name: windowName, text: windowSql, values: [id, blockOf(key.period, lo), blockOf(key.period, hi)], rowMode: 'array' });
      const coverage: Segment[] = [];
      const blocks: { block: number; data: Uint8Array }[] = [];
      for (const row of r.rows as [number, number, number | null, number | null, Buffer | null][]) {
        if (row[0] === 0) coverage.push({ lo: row[1], hi: row[2] as number, recheckAt: row[3] });
        else blocks.push({ block: row[1], data: row[4] as Buffer });
      }
      return { coverage, blocks };
    },

    async countBars(key, lo, hi) {
      const id = await findId(pool, key);
      if (id === undefined) return 0;
      const bl = blockOf(key.period, lo);
      const bh = blockOf(key.period, hi);
      const inner = await pool.query(`SELECT coalesce(sum(n), 0)::bigint AS n FROM ${s}.blocks WHERE series = $1 AND block > $2 AND block < $3`, [id, bl, bh]);
      const edges = await pool.query(`SELECT data FROM ${s}.blocks WHERE series = $1 AND block = ANY($2::integer[])`, [id, [bl, bh]]);
      let n = inner.rows[0].n as number;
      for (const row of edges.rows as { data: Buffer }[]) n += countIn(decodeTimestamps(row.data), lo, hi);
      return n;
    },

    async fill({ key, bars, covers }) {
      await inTransaction(async (c) => {
        await c.query(`INSERT INTO ${s}.series (adapter, symbol, period) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [key.adapter, key.symbol, key.period]);
        const locked = await c.query(`SELECT id FROM ${s}.series WHERE adapter = $1 AND symbol = $2 AND period = $3 FOR UPDATE`, [key.adapter, key.symbol, key.period]);
        const id = locked.rows[0].id as number;
        idsOf(key.adapter, key.period).set(key.symbol, id);
        if (bars.timestamp.length > 0) await writeBars(c, id, key.period, bars);
        if (hook !== undefined) await hook();
        await writeCoverage(c, id, overlayAll(await coverageOf(c, id), covers));
      });
    },

    async drop(filter) {
      return inTransaction(async (c) => {
        let deleted = 0;
        for (const m of await matching(c, filter)) {
          deleted += await dropRange(c, m.id, m.period, filter.from ?? Number.MIN_SAFE_INTEGER, filter.to ?? Number.MAX_SAFE_INTEGER);
        }
        return deleted;
      });
    },

    async prune(period: BasePeriod, before: number, _signal?: AbortSignal, scope: PruneScope = 'adhoc') {
      // Asynchronous already (the event loop is free while PostgreSQL deletes): one transaction,
      // set-wise over every series of the period, the series rows locked like a fill's. Whole
      // blocks before the cut's block go in one statement; each block holding the cut is rewritten.
      return inTransaction(async (c) => {
        await matching(c, { period });
        // Recorded series (ledger 'series') keep the recorder's retention; the others the store's.
        const recorded = `EXISTS (SELECT 1 FROM ${s}.ledger l WHERE l.kind = 'series' AND l.day = '' AND l.name = x.adapter || '/' || x.symbol || '/' || x.period)`;
        const of = `series IN (SELECT id FROM ${s}.series x WHERE period = $1 AND ${scope === 'recorded' ? recorded : `NOT ${recorded}`})`;
        const edge = blockOf(period, before - 1);
        const whole = await c.query(
          `WITH d AS (DELETE FROM ${s}.blocks WHERE ${of} AND block < $2 RETURNING n) SELECT coalesce(sum(n), 0)::bigint AS n FROM d`, [period, edge]);
        let deleted = whole.rows[0].n as number;
        const edges = await c.query(`SELECT series, block, data FROM ${s}.blocks WHERE ${of} AND block = $2`, [period, edge]);
        for (const row of edges.rows as { series: number; block: number; data: Buffer }[]) {
          const { kept, removed } = cutBlock(decodeBlock(row.data), Number.MIN_SAFE_INTEGER, before - 1);
          if (removed > 0) await putBlocks(c, row.series, [{ block: row.block, bars: kept }]);
          deleted += removed;
        }
        await c.query(`DELETE FROM ${s}.coverage WHERE ${of} AND hi < $2`, [period, before]);
        await c.query(`UPDATE ${s}.coverage SET lo = $2 WHERE ${of} AND lo < $2`, [period, before]);
        return deleted;
      });
    },

    async ledgerPut(kind, rows) {
      if (rows.length === 0) return;
      await pool.query(
        `INSERT INTO ${s}.ledger (kind, name, day, updated_at, data)
           SELECT $1, * FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[])
         ON CONFLICT (kind, name, day) DO UPDATE SET updated_at = excluded.updated_at, data = excluded.data`,
        [kind, rows.map((r) => r.name), rows.map((r) => r.day), rows.map((r) => r.updatedAt), rows.map((r) => r.data)],
      );
    },

    async ledgerGet(kind, q) {
      const where = ['kind = $1'];
      const args: unknown[] = [kind];
      if (q.name !== undefined) { args.push(q.name); where.push(`name = $${args.length}`); }
      if (q.prefix !== undefined) { args.push(q.prefix); where.push(`left(name, length($${args.length})) = $${args.length}`); }
      if (q.from !== undefined) { args.push(q.from); where.push(`day >= $${args.length}`); }
      if (q.to !== undefined) { args.push(q.to); where.push(`day <= $${args.length}`); }
      const base = `SELECT name, day, updated_at, data FROM ${s}.ledger WHERE ${where.join(' AND ')}`;
      const sql = q.last === true || q.first === true
        ? `SELECT DISTINCT ON (name) name, day, updated_at, data FROM (${base}) l ORDER BY name, day ${q.last === true ? 'DESC' : 'ASC'}`
        : `${base} ORDER BY name, day`;
      const r = await pool.query(sql, args);
      return (r.rows as { name: string; day: string; updated_at: number; data: string }[]).map((row) => ({ name: row.name, day: row.day, updatedAt: Number(row.updated_at), data: row.data }));
    },

    async referenceGet(kind, adapter, symbols) {
      if (symbols.length === 0) return [];
      const r = await pool.query(`SELECT symbol, fetched_at, data FROM ${s}.reference WHERE kind = $1 AND adapter = $2 AND symbol = ANY($3)`, [kind, adapter, [...symbols]]);
      return (r.rows as { symbol: string; fetched_at: string | number; data: string }[]).map((row) => ({ symbol: row.symbol, fetchedAt: Number(row.fetched_at), data: row.data }));
    },

    async referencePut(kind, adapter, rows) {
      if (rows.length === 0) return;
      await pool.query(
        `INSERT INTO ${s}.reference (kind, adapter, symbol, fetched_at, data)
           SELECT $1, $2, * FROM unnest($3::text[], $4::bigint[], $5::text[])
         ON CONFLICT (kind, adapter, symbol) DO UPDATE SET fetched_at = excluded.fetched_at, data = excluded.data`,
        [kind, adapter, rows.map((row) => row.symbol), rows.map((row) => row.fetchedAt), rows.map((row) => row.data)],
      );
    },

    async stats(): Promise<HistoryStats> {
      const out = emptyStats('postgres', location);
      const r = await pool.query(`SELECT s.adapter, s.symbol, s.period,
          (SELECT coalesce(sum(n), 0) FROM ${s}.blocks b WHERE b.series = s.id)::bigint AS bars,
          (SELECT count(*) FROM ${s}.coverage c WHERE c.series = s.id)::bigint AS ranges
        FROM ${s}.series s`);
      tallySeries(out, r.rows as SeriesCount[]);
      out.bytes = await sizeBytes();
      return out;
    },

    sizeBytes,

    async probe() {
      // A shared store has no write probe: its write failures are failures like any other.
      let timer: NodeJS.Timeout | undefined;
      const work = probeQuery();
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
      });
      try {
        await Promise.race([work, late]);
      } catch (error) {
        // A connection that failed or did not answer in time is not used again.
        dropProbeClient();
        throw error;
      } finally {
        clearTimeout(timer);
        work.catch(() => undefined);
      }
    },

    async close() {
      probeClosed = true;
      dropProbeClient();
      await pool.end();
    },
  };

  /** One statement on the probe's own connection (opened on first use and after a failure). */
  async function probeQuery(): Promise<void> {
    if (probeClosed) throw new Error('closed');
    let c = probeClient;
    if (c === undefined) {
      c = new pg.Client({
        connectionString: databaseUrl, connectionTimeoutMillis: PROBE_TIMEOUT_MS, query_timeout: PROBE_TIMEOUT_MS,
        statement_timeout: PROBE_TIMEOUT_MS,
      });
      const mine = c;
      // A server restart ends the connection: the next probe opens another.
      mine.on('error', () => {
        if (probeClient === mine) dropProbeClient();
      });
      probeClient = mine;
      await mine.connect();
    }
    await c.query(`SELECT 1 FROM ${s}.series LIMIT 1`);
  }

  function dropProbeClient(): void {
    const c = probeClient;
    probeClient = undefined;
    void c?.end().catch(() => undefined);
  }

  /** Upserts validated bars block by block: a block already held is merged, new bars winning. */
  async function writeBars(c: pg.PoolClient, id: number, period: BasePeriod, bars: Candles): Promise<void> {
    const runs = blockRuns(period, bars.timestamp);
    const held = await c.query(`SELECT block, data FROM ${s}.blocks WHERE series = $1 AND block BETWEEN $2 AND $3`,
      [id, runs[0].block, runs[runs.length - 1].block]);
    const old = new Map<number, Buffer>();
    for (const row of held.rows as { block: number; data: Buffer }[]) old.set(row.block, row.data);
    await putBlocks(c, id, runs.map((run) => {
      const data = old.get(run.block);
      return data === undefined
        ? { block: run.block, bars, from: run.from, to: run.to }
        : { block: run.block, bars: mergeBlock(decodeBlock(data), sliceCandles(bars, run.from, run.to)) };
    }));
  }
}

/** Schema step 2: every version-1 bar row into its block, inside the migration's transaction. */
async function convertV1(client: pg.PoolClient, s: string): Promise<number> {
  let moved = 0;
  const series = (await client.query(`SELECT id, period FROM ${s}.series`)).rows as { id: number; period: BasePeriod }[];
  for (const { id, period } of series) {
    const r = await client.query(`SELECT ts, open, high, low, close, volume, amount, prev_close FROM ${s}.bars WHERE series = $1 ORDER BY ts`, [id]);
    const rows = r.rows as { ts: number; open: number; high: number; low: number; close: number; volume: number; amount: number; prev_close: number | null }[];
    if (rows.length === 0) continue;
    const bars: BlockBars = {
      timestamp: rows.map((x) => Number(x.ts)), open: rows.map((x) => x.open), high: rows.map((x) => x.high), low: rows.map((x) => x.low),
      close: rows.map((x) => x.close), volume: rows.map((x) => Number(x.volume)), amount: rows.map((x) => x.amount),
      prev_close: rows.map((x) => (x.prev_close === null ? Number.NaN : x.prev_close)),
    };
    const runs = blockRuns(period, bars.timestamp);
    const data = runs.map((run) => {
      const bytes = encodeBlock(bars, run.from, run.to);
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    });
    await client.query(`INSERT INTO ${s}.blocks (series, block, n, data) SELECT $1, * FROM unnest($2::integer[], $3::integer[], $4::bytea[])`,
      [id, runs.map((x) => x.block), runs.map((x) => x.to - x.from), data]);
    moved += rows.length;
  }
  await client.query(`DROP TABLE ${s}.bars`);
  return moved;
}

/** Drops a schema and everything in it (tests, and `history drop` of a whole PostgreSQL store is not offered). */
export async function dropPostgresSchema(databaseUrl: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * The series lock of a shared PostgreSQL store without Redis (series-lock.ts): a session advisory
 * lock per series, keyed (hashtext(space), hashtext(series)) in the two-int key space (the
 * migration's lock is in the one-bigint space: the two never meet), on one connection of this
 * process's own, never a pool connection (a holder keeps its lock through its vendor call; from
 * the pool, eight holders would starve their own writes). Chosen over the transaction-scoped
 * `pg_advisory_xact_lock` (that would hold a transaction, and a pool connection, open across the
 * vendor call) and over a blocking `pg_advisory_lock` with `lock_timeout` (it would block the
 * shared connection, and every other series' lock with it): pg_try_advisory_lock is tried and
 * never waits inside PostgreSQL; the holder's release NOTIFYs the waiters (LISTEN on the same
 * connection), who otherwise poll every `pollMs`. A process that dies, or whose connection drops,
 * loses its locks at once (PostgreSQL ends the session): a waiter then takes the lock and finds
 * the gap still missing, so it fetches it; at worst a fill joins one still running: one extra
 * vendor call, never a wrong answer (bars are upserted, coverage overlaid). PostgreSQL not
 * answering: fill directly, as one instance alone would.
 */
export function openAdvisoryLock(databaseUrl: string, schema = 'mdqs_history', options: { pollMs?: number; timeoutMs?: number; retryMs?: number } = {}): SeriesLock {
  const pollMs = options.pollMs ?? 100;
  const timeoutMs = options.timeoutMs ?? 2000;
  const retryMs = options.retryMs ?? 1000;
  const space = `mdqs_fill:${schema}`;
  const channel = 'mdqs_history_filled';
  const waiters = new Map<string, Set<() => void>>();
  let client: pg.Client | undefined;
  let connecting: Promise<pg.Client | undefined> | undefined;
  let failedAt = -Infinity;
  let closed = false;
  /** One query at a time on the connection (pg deprecates queueing on a busy client). */
  let turn: Promise<unknown> = Promise.resolve();
  const query = (c: pg.Client, sql: string, args: unknown[]): Promise<pg.QueryResult> => {
    const run = turn.then(() => c.query(sql, args));
    turn = run.catch(() => undefined);
    return run;
  };

  const wake = (payload: string | undefined) => {
    if (payload === undefined || !payload.startsWith(`${schema}|`)) return;
    const series = payload.slice(schema.length + 1);
    const set = waiters.get(series);
    if (set === undefined) return;
    waiters.delete(series);
    for (const w of set) w();
  };

  const connection = (): Promise<pg.Client | undefined> => {
    if (client !== undefined) return Promise.resolve(client);
    if (closed || performance.now() - failedAt < retryMs) return Promise.resolve(undefined);
    connecting ??= (async () => {
      const c = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
      const drop = () => {
        if (client === c) client = undefined;
        void c.end().catch(() => undefined);
      };
      c.on('error', drop);
      c.on('end', () => { if (client === c) client = undefined; });
      c.on('notification', (message) => wake(message.payload));
      try {
        await c.connect();
        await c.query(`LISTEN ${channel}`);
        if (closed) throw new Error('closed');
        client = c;
        return c;
      } catch {
        failedAt = performance.now();
        drop();
        return undefined;
      } finally {
        connecting = undefined;
      }
    })();
    return connecting;
  };

  /** true/false: the lock's answer; undefined: PostgreSQL did not answer (fill directly). */
  const tryLock = async (series: string): Promise<boolean | undefined> => {
    const c = await connection();
    if (c === undefined) return undefined;
    try {
      const r = await query(c, 'SELECT pg_try_advisory_lock(hashtext($1), hashtext($2)) AS ok', [space, series]);
      return r.rows[0].ok === true;
    } catch {
      failedAt = performance.now();
      if (client === c) client = undefined;
      void c.end().catch(() => undefined);
      return undefined;
    }
  };

  const release = async (series: string) => {
    const c = client;
    if (c === undefined) return;
    await query(c, 'SELECT pg_advisory_unlock(hashtext($1), hashtext($2)), pg_notify($3, $4)', [space, series, channel, `${schema}|${series}`])
      .catch(() => undefined);
  };

  const signal = (series: string, ms: number) => new Promise<void>((resolve) => {
    let set = waiters.get(series);
    if (set === undefined) {
      set = new Set();
      waiters.set(series, set);
    }
    const done = () => {
      clearTimeout(timer);
      set.delete(done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(1, ms));
    set.add(done);
  });

  return {
    mechanism: 'postgres',
    async run(series, { waitMs }, fill, readFilled) {
      const deadline = performance.now() + waitMs;
      for (;;) {
        if (performance.now() >= deadline) return fill();
        const won = await tryLock(series);
        if (won === undefined) return fill();
        if (won) {
          try {
            const already = await readFilled();
            return already !== undefined ? already : await fill();
          } finally {
            await release(series);
          }
        }
        await signal(series, Math.min(pollMs, deadline - performance.now()));
        if (performance.now() >= deadline) return fill();
        const filled = await readFilled();
        if (filled !== undefined) return filled;
      }
    },
    async close() {
      closed = true;
      for (const set of waiters.values()) for (const w of set) w();
      waiters.clear();
      await connecting;
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
