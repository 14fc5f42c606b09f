// The shared backend: PostgreSQL through `pg`, for several instances that share one history.
// Every fill is one transaction that first locks its series row (SELECT … FOR UPDATE), so two
// instances filling the same series serialise their coverage updates; bars are upserted on the
// (series, ts) key, so overlapping fills neither duplicate nor lose bars. A client killed mid-fill
// leaves an open transaction that PostgreSQL rolls back when the connection drops.
import pg from 'pg';
import type { BasePeriod, Candles } from '../domain.ts';
import { cut, overlayAll, type Segment } from './coverage.ts';
import {
  emptyStats, rowsToCandles, tallySeries, type Backend, type BarRow, type DropFilter, type FillHook, type HistoryStats, type SeriesCount, type SeriesKey,
} from './backend.ts';
import { POSTGRES_STEPS, SCHEMA_VERSION, SchemaTooNewError } from './schema.ts';

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

export async function openPostgresBackend(databaseUrl: string, schema = 'mdqs_history', hook?: FillHook): Promise<Backend> {
  const location = `${redactUrl(databaseUrl)} schema ${schema}`;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 8, connectionTimeoutMillis: 5000, types: types as pg.CustomTypesConfig });
  // An idle client's error (server restart) must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  const s = quoteIdent(schema);
  try {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      // Two instances booting at once: one migrates, the other waits and then finds it done.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`mdqs_history:${schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${s}.history_schema (version integer NOT NULL)`);
      const found = Number((await client.query(`SELECT coalesce(max(version), 0) AS v FROM ${s}.history_schema`)).rows[0].v);
      if (found > SCHEMA_VERSION) throw new SchemaTooNewError(location, found);
      for (let v = found + 1; v <= SCHEMA_VERSION; v++) for (const sql of POSTGRES_STEPS[v - 1]) await client.query(sql.replaceAll('%s', s));
      if (found < SCHEMA_VERSION) {
        await client.query(`DELETE FROM ${s}.history_schema`);
        await client.query(`INSERT INTO ${s}.history_schema (version) VALUES ($1)`, [SCHEMA_VERSION]);
      }
      await client.query('COMMIT');
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

  const ids = new Map<string, number>();
  const keyOf = (k: SeriesKey) => `${k.adapter}\u0000${k.symbol}\u0000${k.period}`;

  const findId = async (q: Queryable, k: SeriesKey): Promise<number | undefined> => {
    const cached = ids.get(keyOf(k));
    if (cached !== undefined) return cached;
    const r = await q.query(`SELECT id FROM ${s}.series WHERE adapter = $1 AND symbol = $2 AND period = $3`, [k.adapter, k.symbol, k.period]);
    if (r.rows.length === 0) return undefined;
    ids.set(keyOf(k), r.rows[0].id as number);
    return r.rows[0].id as number;
  };

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

  const matching = async (q: Queryable, f: DropFilter): Promise<number[]> => {
    const where: string[] = [];
    const args: string[] = [];
    if (f.adapter !== undefined) { args.push(f.adapter); where.push(`adapter = $${args.length}`); }
    if (f.symbol !== undefined) { args.push(f.symbol); where.push(`symbol = $${args.length}`); }
    if (f.period !== undefined) { args.push(f.period); where.push(`period = $${args.length}`); }
    const r = await q.query(`SELECT id FROM ${s}.series${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY id FOR UPDATE`, args);
    return r.rows.map((row) => row.id as number);
  };

  const dropRange = async (q: Queryable, id: number, from: number, to: number): Promise<number> => {
    const r = await q.query(`DELETE FROM ${s}.bars WHERE series = $1 AND ts BETWEEN $2 AND $3`, [id, from, to]);
    await writeCoverage(q, id, cut(await coverageOf(q, id), from, to));
    return r.rowCount ?? 0;
  };

  const sizeBytes = async (): Promise<number> => {
    const r = await pool.query(
      `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind = 'r'`, [schema]);
    return r.rows[0].bytes as number;
  };

  const cols = 'ts, open, high, low, close, volume, amount, prev_close';

  return {
    kind: 'postgres',
    location,

    async coverage(key) {
      const id = await findId(pool, key);
      return id === undefined ? [] : coverageOf(pool, id);
    },

    async read(key, lo, hi, newest) {
      const id = await findId(pool, key);
      if (id === undefined) return rowsToCandles([]);
      if (newest === undefined) {
        const r = await pool.query(`SELECT ${cols} FROM ${s}.bars WHERE series = $1 AND ts BETWEEN $2 AND $3 ORDER BY ts`, [id, lo, hi]);
        return rowsToCandles(r.rows as BarRow[]);
      }
      const r = await pool.query(`SELECT ${cols} FROM ${s}.bars WHERE series = $1 AND ts BETWEEN $2 AND $3 ORDER BY ts DESC LIMIT $4`, [id, lo, hi, newest]);
      return rowsToCandles((r.rows as BarRow[]).reverse());
    },

    async countBars(key, lo, hi) {
      const id = await findId(pool, key);
      if (id === undefined) return 0;
      const r = await pool.query(`SELECT count(*)::bigint AS n FROM ${s}.bars WHERE series = $1 AND ts BETWEEN $2 AND $3`, [id, lo, hi]);
      return r.rows[0].n as number;
    },

    async fill({ key, bars, covers }) {
      await inTransaction(async (c) => {
        await c.query(`INSERT INTO ${s}.series (adapter, symbol, period) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [key.adapter, key.symbol, key.period]);
        const locked = await c.query(`SELECT id FROM ${s}.series WHERE adapter = $1 AND symbol = $2 AND period = $3 FOR UPDATE`, [key.adapter, key.symbol, key.period]);
        const id = locked.rows[0].id as number;
        ids.set(keyOf(key), id);
        if (bars.timestamp.length > 0) await upsert(c, id, bars);
        if (hook !== undefined) await hook();
        await writeCoverage(c, id, overlayAll(await coverageOf(c, id), covers));
      });
    },

    async drop(filter) {
      return inTransaction(async (c) => {
        let deleted = 0;
        for (const id of await matching(c, filter)) {
          deleted += await dropRange(c, id, filter.from ?? Number.MIN_SAFE_INTEGER, filter.to ?? Number.MAX_SAFE_INTEGER);
        }
        return deleted;
      });
    },

    async prune(period: BasePeriod, before: number) {
      // Asynchronous already (the event loop is free while PostgreSQL deletes): one statement.
      // Set-wise over every series of the period; the series rows are locked like a fill's.
      return inTransaction(async (c) => {
        await matching(c, { period });
        const of = `series IN (SELECT id FROM ${s}.series WHERE period = $1)`;
        const r = await c.query(`DELETE FROM ${s}.bars WHERE ${of} AND ts < $2`, [period, before]);
        await c.query(`DELETE FROM ${s}.coverage WHERE ${of} AND hi < $2`, [period, before]);
        await c.query(`UPDATE ${s}.coverage SET lo = $2 WHERE ${of} AND lo < $2`, [period, before]);
        return r.rowCount ?? 0;
      });
    },

    async stats(): Promise<HistoryStats> {
      const out = emptyStats('postgres', location);
      const r = await pool.query(`SELECT s.adapter, s.symbol, s.period,
          (SELECT count(*) FROM ${s}.bars b WHERE b.series = s.id)::bigint AS bars,
          (SELECT count(*) FROM ${s}.coverage c WHERE c.series = s.id)::bigint AS ranges
        FROM ${s}.series s`);
      tallySeries(out, r.rows as SeriesCount[]);
      out.bytes = await sizeBytes();
      return out;
    },

    sizeBytes,

    async close() {
      await pool.end();
    },
  };

  async function upsert(c: pg.PoolClient, id: number, bars: Candles): Promise<void> {
    await c.query(
      `INSERT INTO ${s}.bars (series, ts, open, high, low, close, volume, amount, prev_close)
       SELECT $1, * FROM unnest($2::bigint[], $3::float8[], $4::float8[], $5::float8[], $6::float8[], $7::bigint[], $8::float8[], $9::float8[])
       ON CONFLICT (series, ts) DO UPDATE SET open = excluded.open, high = excluded.high, low = excluded.low,
         close = excluded.close, volume = excluded.volume, amount = excluded.amount, prev_close = excluded.prev_close`,
      [id, bars.timestamp, bars.open, bars.high, bars.low, bars.close, bars.volume, bars.amount,
        bars.prev_close ?? bars.timestamp.map(() => null)],
    );
  }
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
