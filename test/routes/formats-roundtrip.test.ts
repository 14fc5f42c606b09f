// Issue 26: every table route in every period answers the same table in CSV, Arrow and Parquet as
// in JSON, read back by the tools research code uses: the Arrow IPC stream by apache-arrow (int64
// columns as BigInt), Parquet by DuckDB (@duckdb/node-api), CSV by pandas (Debian's python3-pandas,
// `pd.read_csv(url)` against the running server, as docs/formats.md shows). The expected table is built
// here from the JSON answer (long form for batches, nested fields flattened with a dot), not by the
// code under test.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { tableFromIPC } from 'apache-arrow';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { MINUTE_PERIODS, PERIODS } from '../../src/domain.ts';
import { STATEMENT_FIELDS, STATEMENT_ROUTES, STATEMENTS } from '../../src/financials/types.ts';

type Kind = 'timestamp' | 'float64' | 'int64' | 'symbol' | 'utf8' | 'bool' | 'date';
type Cols = [string, Kind][];

const CANDLES: Cols = [['timestamp', 'timestamp'], ['open', 'float64'], ['high', 'float64'], ['low', 'float64'], ['close', 'float64'],
  ['volume', 'int64'], ['amount', 'float64'], ['prev_close', 'float64']];
const BATCH: Cols = [['symbol', 'symbol'], ...CANDLES];
const EX_FACTORS: Cols = [['symbol', 'symbol'], ['timestamp', 'timestamp'], ['ex_factor', 'float64'], ['cash_dividend', 'float64'],
  ['bonus_ratio', 'float64'], ['rights_ratio', 'float64'], ['rights_price', 'float64'], ['parts_known', 'bool']];
const QUOTES: Cols = [['symbol', 'symbol'], ['region', 'symbol'], ['last_price', 'float64'], ['open', 'float64'], ['high', 'float64'],
  ['low', 'float64'], ['prev_close', 'float64'], ['volume', 'int64'], ['amount', 'float64'], ['timestamp', 'timestamp'], ['session', 'symbol'],
  ['ext.type', 'symbol'], ['ext.name', 'utf8'], ['ext.amplitude', 'float64'], ['ext.change_amount', 'float64'], ['ext.change_pct', 'float64'],
  ['ext.turnover_rate', 'float64']];
const INSTRUMENTS: Cols = [['code', 'utf8'], ['exchange', 'symbol'], ['name', 'utf8'], ['region', 'symbol'], ['symbol', 'symbol'], ['type', 'symbol'],
  ['ext.type', 'symbol'], ['ext.float_shares', 'float64'], ['ext.limit_down', 'float64'], ['ext.limit_up', 'float64'], ['ext.listing_date', 'date'],
  ['ext.tick_size', 'float64'], ['ext.total_shares', 'float64'], ['ext.lot_size', 'int64']];

const financialColumns = (statement: keyof typeof STATEMENT_FIELDS): Cols => [['symbol', 'symbol'], ['period_end', 'date'], ['announce_date', 'date'],
  ['currency', 'symbol'], ['period_months', 'int64'], ...STATEMENT_FIELDS[statement].map((f): [string, Kind] => [f, 'float64'])];

type Row = Record<string, unknown>;

function flatten(record: Row): Row {
  const out: Row = {};
  for (const [name, value] of Object.entries(record)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) for (const [k, v] of Object.entries(value)) out[`${name}.${k}`] = v;
    else out[name] = value;
  }
  return out;
}

function candleRows(candles: Record<string, number[]>, symbol?: string): Row[] {
  return candles.timestamp.map((_, i) => {
    const row: Row = symbol === undefined ? {} : { symbol };
    for (const [name] of CANDLES) row[name] = candles[name]?.[i];
    return row;
  });
}

/** The JSON answer as rows of the table the other formats must carry. */
const ROWS = {
  candles: (data: unknown) => candleRows(data as Record<string, number[]>),
  batch: (data: unknown) => Object.entries(data as Record<string, Record<string, number[]>>).flatMap(([s, c]) => candleRows(c, s)),
  perSymbol: (data: unknown) => Object.entries(data as Record<string, Row[]>).flatMap(([symbol, records]) => records.map((r) => ({ symbol, ...flatten(r) }))),
  records: (data: unknown) => (data as Row[]).map(flatten),
};

interface Case { name: string; url: string; cols: Cols; rows: (data: unknown) => Row[] }

const SYMBOLS = '600519.SH,00700.HK,AAPL.US';
const CASES: Case[] = [
  ...PERIODS.map((p) => ({ name: `klines ${p}`, url: `/v1/klines?symbol=600519.SH&period=${p}&count=40`, cols: CANDLES, rows: ROWS.candles })),
  ...PERIODS.map((p) => ({ name: `klines/batch ${p}`, url: `/v1/klines/batch?symbols=${SYMBOLS}&period=${p}&count=15`, cols: BATCH, rows: ROWS.batch })),
  ...MINUTE_PERIODS.map((p) => ({ name: `intraday ${p}`, url: `/v1/klines/intraday?symbol=00700.HK&period=${p}`, cols: CANDLES, rows: ROWS.candles })),
  ...MINUTE_PERIODS.map((p) => ({ name: `intraday/batch ${p}`, url: `/v1/klines/intraday/batch?symbols=${SYMBOLS}&period=${p}&count=30`, cols: BATCH, rows: ROWS.batch })),
  { name: 'ex-factors', url: `/v1/klines/ex-factors?symbols=${SYMBOLS}`, cols: EX_FACTORS, rows: ROWS.perSymbol },
  { name: 'quotes', url: `/v1/quotes?symbols=${SYMBOLS},510300.SH`, cols: QUOTES, rows: ROWS.records },
  { name: 'instruments', url: `/v1/instruments?symbols=${SYMBOLS},510300.SH`, cols: INSTRUMENTS, rows: ROWS.records },
  ...STATEMENTS.map((s) => ({ name: `financials ${s}`, url: `/v1/financials/${STATEMENT_ROUTES[s]}?symbols=${SYMBOLS}`, cols: financialColumns(s), rows: ROWS.perSymbol })),
];

let app: FastifyInstance;
let base: string;
let duck: DuckDBConnection;
const dir = mkdtempSync(join(tmpdir(), 'mdqs-formats-'));
const json = new Map<string, Row[]>();

async function get(url: string): Promise<{ status: number; type: string; body: Buffer }> {
  const res = await fetch(base + url, { headers: { 'x-api-key': KEYS.demo } });
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: Buffer.from(await res.arrayBuffer()) };
}

beforeAll(async () => {
  ({ app } = await buildTestApp());
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  duck = await (await DuckDBInstance.create(':memory:')).connect();
  for (const c of CASES) {
    const res = await get(c.url);
    expect(res.status, c.url).toBe(200);
    const rows = c.rows((JSON.parse(res.body.toString()) as { data: unknown }).data);
    json.set(c.name, rows);
  }
});
afterAll(async () => {
  duck?.closeSync();
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A JSON cell as Arrow gives it back: int64 as BigInt, dates as epoch ms, absent as null. */
function asArrow(kind: Kind, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (kind === 'int64') return BigInt(value as number);
  if (kind === 'date') return Date.parse(`${value as string}T00:00:00Z`);
  return value;
}

const ARROW_TYPE: Record<Kind, string> = {
  timestamp: 'Timestamp<MILLISECOND, UTC>', float64: 'Float64', int64: 'Int64', symbol: 'Dictionary<Int32, Utf8>', utf8: 'Utf8', bool: 'Bool', date: 'Date32<DAY>',
};

describe('Arrow IPC stream read back with apache-arrow equals the JSON answer cell for cell', () => {
  it.each(CASES.map((c) => [c.name, c]))('%s', async (_name, c) => {
    const res = await get(`${c.url}&format=arrow`);
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/vnd.apache.arrow.stream');
    const table = tableFromIPC(res.body);
    expect(table.schema.fields.map((f) => [f.name, String(f.type)])).toEqual(c.cols.map(([n, k]) => [n, ARROW_TYPE[k]]));
    const rows = json.get(c.name)!;
    expect(rows.length).toBeGreaterThan(0);
    expect(table.numRows).toBe(rows.length);
    for (const [name, kind] of c.cols) {
      const column = table.getChild(name)!;
      const got = Array.from({ length: table.numRows }, (_, i) => column.get(i));
      expect(got, name).toEqual(rows.map((r) => asArrow(kind, r[name])));
    }
  });
});

describe('Parquet read by DuckDB equals the JSON answer', () => {
  const DUCK_TYPE: Record<Kind, string> = {
    timestamp: 'TIMESTAMP WITH TIME ZONE', float64: 'DOUBLE', int64: 'BIGINT', symbol: 'VARCHAR', utf8: 'VARCHAR', bool: 'BOOLEAN', date: 'DATE',
  };
  it.each(CASES.map((c) => [c.name, c]))('%s', async (_name, c) => {
    const res = await get(`${c.url}&format=parquet`);
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/vnd.apache.parquet');
    const file = join(dir, `${c.name.replace(/\W/g, '_')}.parquet`);
    writeFileSync(file, res.body);
    const described = (await duck.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file}')`)).getRowObjectsJS();
    expect(described.map((d) => [d.column_name, d.column_type])).toEqual(c.cols.map(([n, k]) => [n, DUCK_TYPE[k]]));
    // Timestamps as epoch ms and dates as text, so each cell compares with JSON's.
    const select = c.cols.map(([n, k]) => (k === 'timestamp' ? `epoch_ms("${n}") AS "${n}"` : k === 'date' ? `strftime("${n}", '%Y-%m-%d') AS "${n}"` : `"${n}"`)).join(', ');
    const got = (await duck.runAndReadAll(`SELECT ${select} FROM read_parquet('${file}')`)).getRowObjects();
    const rows = json.get(c.name)!;
    expect(got.length).toBe(rows.length);
    const expected = rows.map((r) => Object.fromEntries(c.cols.map(([n, k]) => {
      const v = r[n] ?? null;
      return [n, v === null ? null : k === 'int64' || k === 'timestamp' ? BigInt(v as number) : v];
    })));
    expect(got).toEqual(expected);
  });
});

describe('CSV read by pandas (pd.read_csv(url, float_precision="round_trip")) equals the JSON answer', () => {
  const PYTHON = '/usr/bin/python3';
  // Every case in one Python process: read_csv straight from the server, then each column as JSON.
  const script = `
import json, math, sys
import pandas as pd
base, key = sys.argv[1], sys.argv[2]
out = {}
for name, url in json.load(sys.stdin):
    # round_trip: pandas' default float parser may miss the last bit of a 17-digit value (an
    # ex_factor); docs/formats.md says so.
    df = pd.read_csv(base + url, storage_options={"X-API-Key": key}, float_precision="round_trip")
    cols = {}
    for c in df.columns:
        cols[c] = [None if isinstance(v, float) and math.isnan(v) else (v.item() if hasattr(v, "item") else v) for v in df[c].tolist()]
    out[name] = {"columns": list(df.columns), "dtypes": {c: str(t) for c, t in df.dtypes.items()}, "data": cols}
print(json.dumps(out))
`;
  let read: Record<string, { columns: string[]; dtypes: Record<string, string>; data: Record<string, unknown[]> }>;
  beforeAll(async () => {
    const input = JSON.stringify(CASES.map((c) => [c.name, `${c.url}&format=csv`]));
    // The server answers while Python reads: spawn asynchronously.
    const { spawn } = await import('node:child_process');
    const child = spawn(PYTHON, ['-c', script, base, KEYS.demo]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.end(input);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(0);
    read = JSON.parse(stdout);
  }, 120_000);

  it('python3-pandas is installed (.ci/run ensure_pandas)', () => {
    expect(spawnSync(PYTHON, ['-c', 'import pandas']).status).toBe(0);
  });

  it.each(CASES.map((c) => [c.name, c]))('%s', (_name, c) => {
    const got = read[c.name];
    expect(got.columns).toEqual(c.cols.map(([n]) => n));
    const rows = json.get(c.name)!;
    for (const [name, kind] of c.cols) {
      const expected = rows.map((r) => r[name] ?? null);
      expect(got.data[name], name).toEqual(expected);
      // Integers parse as int64 (epoch ms, volumes) and prices as float64 without a dtype argument.
      if ((kind === 'timestamp' || kind === 'int64') && !expected.includes(null)) expect(got.dtypes[name], name).toBe('int64');
      if (kind === 'float64' && expected.some((v) => v !== null && !Number.isInteger(v))) expect(got.dtypes[name], name).toBe('float64');
    }
  });
});
