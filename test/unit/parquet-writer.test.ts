// The Parquet writer (src/http/formats/parquet.ts) read back by two independent readers: arrow-rs
// (parquet-wasm's reader, which also restores the Arrow types from the footer's ARROW:schema, as
// pyarrow does) and DuckDB (which checks the encodings and statistics as written). Tables are
// random, of every column type, with nulls, with more rows than a page holds, with dictionaries
// wider than a byte, and with integers near and past int64's range. The expected values are
// derived here from the input, not by the writer.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tableFromIPC } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { encodeTable } from '../../src/http/formats/encode.ts';
import { DICTIONARY_MAX_BYTES, PAGE_VALUES, toParquet } from '../../src/http/formats/parquet.ts';
import type { ColumnDef, TableData } from '../../src/http/formats/tables.ts';

const DAY_MS = 86_400_000;

/** A seeded generator (tests repeat). */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 16807) % 2147483647) / 2147483647;
}

const COLUMNS: ColumnDef[] = [
  { name: 'symbol', type: 'symbol' },
  { name: 'timestamp', type: 'timestamp' },
  { name: 'price', type: 'float64' },
  { name: 'volume', type: 'int64' },
  { name: 'name', type: 'utf8' },
  { name: 'flag', type: 'bool' },
  { name: 'day', type: 'date' },
];

/** A random table in chunks (each chunk's symbol a constant, as batches are), with ~10 % nulls. */
function randomTable(rows: number, seed: number, options: { names?: number; bigInts?: boolean } = {}): TableData {
  const next = random(seed);
  const chunks: TableData['chunks'][number][] = [];
  let left = rows;
  let t = Date.UTC(2001, 0, 1);
  while (left > 0 || chunks.length === 0) {
    const n = Math.min(left, 1 + Math.floor(next() * (rows / 3 + 1)));
    const maybe = <T>(v: T): T | null => (next() < 0.1 ? null : v);
    const timestamp = Array.from({ length: n }, () => maybe((t += Math.floor(next() * 5) * 60_000)));
    const price = Array.from({ length: n }, () => maybe(next() < 0.05 ? (next() < 0.5 ? -0 : 0) : (next() - 0.3) * 10 ** Math.floor(next() * 12 - 4)));
    const volume = Array.from({ length: n }, () => maybe(options.bigInts && next() < 0.2 ? (next() < 0.5 ? -1 : 1) * (2 ** 52 + Math.floor(next() * 2 ** 20)) : Math.floor(next() * 1e9) - 1e8));
    const name = Array.from({ length: n }, () => maybe(`名称 ${Math.floor(next() * (options.names ?? 20))} "q",x`));
    const flag = Array.from({ length: n }, () => maybe(next() < 0.5));
    const day = Array.from({ length: n }, () => maybe(new Date(Date.UTC(1990, 0, 1) + Math.floor(next() * 15_000) * DAY_MS).toISOString().slice(0, 10)));
    chunks.push({ rows: n, values: [{ constant: next() < 0.1 ? null : `S${chunks.length % 7}` }, timestamp, price, volume, name, flag, day] });
    left -= n;
    if (rows === 0) break;
  }
  return { columns: COLUMNS, chunks };
}

/** The table's rows as readers should give them back (int64 and timestamps as BigInt, dates as days). */
function expectedRows(table: TableData): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const chunk of table.chunks) {
    for (let r = 0; r < chunk.rows; r++) {
      const row: Record<string, unknown> = {};
      table.columns.forEach((def, c) => {
        const source = chunk.values[c];
        const v = 'constant' in source ? source.constant : (source as ArrayLike<unknown>)[r];
        row[def.name] = v === null || v === undefined ? null
          : def.type === 'int64' || def.type === 'timestamp' ? BigInt(v as number)
            : def.type === 'date' ? Date.parse(`${v as string}T00:00:00Z`) / DAY_MS
              : v;
      });
      out.push(row);
    }
  }
  return out;
}

/** Rows as arrow-rs reads the file (through its Arrow IPC output, read by apache-arrow). */
function readByArrowRs(file: Buffer) {
  const table = tableFromIPC(readParquet(new Uint8Array(file)).intoIPCStream());
  const rows = Array.from({ length: table.numRows }, (_, i) => {
    const row: Record<string, unknown> = {};
    for (const field of table.schema.fields) {
      const v = table.getChild(field.name)!.get(i);
      // apache-arrow gives DateDay as epoch ms, and timestamps as numbers.
      row[field.name] = v === null ? v : field.name === 'day' ? (v as number) / DAY_MS : field.name === 'timestamp' ? BigInt(v as number) : v;
    }
    return row;
  });
  return { types: table.schema.fields.map((f) => [f.name, String(f.type)]), rows };
}

let dir: string;
let duck: DuckDBConnection;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parquet-writer-'));
  duck = await (await DuckDBInstance.create(':memory:')).connect();
});
afterAll(() => {
  duck?.closeSync();
  rmSync(dir, { recursive: true, force: true });
});

async function writeAndDescribe(name: string, file: Buffer) {
  const path = join(dir, `${name}.parquet`);
  writeFileSync(path, file);
  const meta = (await duck.runAndReadAll(`SELECT path_in_schema, encodings, stats_min_value, stats_max_value, stats_null_count, num_values FROM parquet_metadata('${path}') ORDER BY column_id`)).getRowObjectsJS();
  return { path, meta };
}

describe('the Parquet writer', () => {
  const cases: Array<[string, number, number, { names?: number; bigInts?: boolean }]> = [
    ['one row', 1, 1, {}],
    ['a few hundred rows', 300, 2, {}],
    ['more rows than two pages hold, a dictionary wider than a byte', 2 * PAGE_VALUES + 1234, 3, { names: 3000 }],
    ['int64 values past ±2^51 (written PLAIN)', 500, 4, { bigInts: true }],
  ];

  it.each(cases)('%s: arrow-rs reads back every value, with the Parquet types (no Arrow schema given)', (_name, rows, seed, options) => {
    const table = randomTable(rows, seed, options);
    const { types, rows: got } = readByArrowRs(toParquet(table, undefined));
    expect(got).toEqual(expectedRows(table));
    // Without the Arrow schema, arrow-rs reads the Parquet types.
    expect(types).toEqual([['symbol', 'Utf8'], ['timestamp', 'Timestamp<MILLISECOND, UTC>'], ['price', 'Float64'], ['volume', 'Int64'],
      ['name', 'Utf8'], ['flag', 'Bool'], ['day', 'Date32<DAY>']]);
  });

  it.each(cases)('%s: DuckDB reads back every value; encodings and statistics as documented', async (name, rows, seed, options) => {
    const table = randomTable(rows, seed, options);
    const { path, meta } = await writeAndDescribe(name.replace(/\W+/g, '_'), toParquet(table));
    const got = (await duck.runAndReadAll(`SELECT symbol, epoch_ms(timestamp) AS timestamp, price, volume, name, flag, datediff('day', DATE '1970-01-01', day) AS day FROM read_parquet('${path}')`)).getRowObjects();
    const expected: Record<string, unknown>[] = expectedRows(table).map((r) => ({ ...r, day: r.day === null ? null : BigInt(r.day as number) }));
    expect(got).toEqual(expected);

    const byColumn = new Map(meta.map((m) => [m.path_in_schema as string, m]));
    expect(Object.fromEntries(meta.map((m) => [m.path_in_schema, m.encodings]))).toEqual({
      symbol: 'PLAIN, RLE, RLE_DICTIONARY', timestamp: 'PLAIN, RLE', price: 'PLAIN, RLE', volume: 'PLAIN, RLE',
      name: 'PLAIN, RLE, RLE_DICTIONARY', flag: 'PLAIN, RLE', day: 'PLAIN, RLE, RLE_DICTIONARY',
    });
    for (const column of ['symbol', 'timestamp', 'price', 'volume', 'name', 'flag', 'day']) {
      expect(Number(byColumn.get(column)!.stats_null_count), column).toBe(expected.filter((r) => r[column] === null).length);
    }
    /** The smallest and largest non-null value of a column (a loop: a spread of 100k values is too deep). */
    const range = <T extends number | bigint>(column: string): [T, T] | undefined => {
      let lo: T | undefined;
      let hi: T | undefined;
      for (const r of expected) {
        const v = r[column] as T | null;
        if (v === null) continue;
        if (lo === undefined || v < lo) lo = v;
        if (hi === undefined || v > hi) hi = v;
      }
      return lo === undefined ? undefined : [lo, hi!];
    };
    const stat = (column: string) => [byColumn.get(column)!.stats_min_value, byColumn.get(column)!.stats_max_value];
    /** The column's statistics are its range as `show` writes it, or none when it holds only nulls. */
    const expectStat = <T extends number | bigint>(column: string, show: (v: T) => unknown) => {
      const r = range<T>(column);
      expect(stat(column), column).toEqual(r === undefined ? [null, null] : r.map(show));
    };
    // Doubles as numbers (DuckDB writes them in its own notation).
    const prices = range<number>('price');
    expect(prices === undefined ? stat('price') : stat('price').map(Number)).toEqual(prices ?? [null, null]);
    expectStat<bigint>('volume', String);
    // DuckDB shows a TIMESTAMP WITH TIME ZONE statistic as `YYYY-MM-DD HH:MM:SS+00` (these are whole minutes).
    expectStat<bigint>('timestamp', (ms) => `${new Date(Number(ms)).toISOString().slice(0, 19).replace('T', ' ')}+00`);
    expectStat<bigint>('day', (days) => new Date(Number(days) * DAY_MS).toISOString().slice(0, 10));
  });

  it('a zero minimum is written -0.0 and a zero maximum +0.0 (the spec: readers may compare either sign)', async () => {
    // `up`'s minimum is a zero given as +0, `down`'s maximum a zero given as -0: each must come out with the other sign.
    const file = toParquet({ columns: [{ name: 'up', type: 'float64' }, { name: 'down', type: 'float64' }], chunks: [{ rows: 2, values: [[0, 1], [-1, -0]] }] });
    const { meta } = await writeAndDescribe('zeros', file);
    expect(meta.map((m) => [m.path_in_schema, m.stats_min_value, m.stats_max_value])).toEqual([['up', '-0.0', '1.0'], ['down', '-1.0', '0.0']]);
    expect(readByArrowRs(file).rows.map((r) => [r.up, Object.is(r.down, -0) ? '-0' : r.down])).toEqual([[0, -1], [1, '-0']]);
  });

  it('all-null pages and columns, and int64 values no int64 holds (nulls), read back by both readers', async () => {
    const rows = PAGE_VALUES + 10;
    const columns: ColumnDef[] = [{ name: 'price', type: 'float64' }, { name: 'volume', type: 'int64' }, { name: 'symbol', type: 'symbol' }, { name: 'none', type: 'utf8' }];
    // The first page holds only nulls; the last ten rows hold values (2^63 and more are out of int64's range).
    const price = Array.from({ length: rows }, (_, i) => (i < PAGE_VALUES ? null : i / 4));
    const big = [2 ** 63, -(2 ** 63), 2 ** 62, -1, 2 ** 64, 0, 1, 2, 3, 4];
    const volume = Array.from({ length: rows }, (_, i) => (i < PAGE_VALUES ? null : big[i - PAGE_VALUES]));
    const symbol = Array.from({ length: rows }, (_, i) => (i < PAGE_VALUES ? null : `S${i % 3}`));
    const file = toParquet({ columns, chunks: [{ rows, values: [price, volume, symbol, { constant: null }] }] });
    const expectedVolume = big.map((v) => (v >= 2 ** 63 || v < -(2 ** 63) ? null : BigInt(v)));
    const { rows: got } = readByArrowRs(file);
    expect(got.slice(0, PAGE_VALUES).every((r) => r.price === null && r.volume === null && r.symbol === null && r.none === null)).toBe(true);
    expect(got.slice(PAGE_VALUES).map((r) => [r.price, r.volume, r.symbol, r.none])).toEqual(price.slice(PAGE_VALUES).map((p, k) => [p, expectedVolume[k], symbol[PAGE_VALUES + k], null]));
    const { path } = await writeAndDescribe('nulls', file);
    const duckRows = (await duck.runAndReadAll(`SELECT price, volume, symbol, "none" FROM read_parquet('${path}') OFFSET ${PAGE_VALUES}`)).getRowObjects();
    expect(duckRows.map((r) => [r.price, r.volume, r.symbol, r.none])).toEqual(price.slice(PAGE_VALUES).map((p, k) => [p, expectedVolume[k], symbol[PAGE_VALUES + k], null]));
    expect((await duck.runAndReadAll(`SELECT count(price) AS p, count(volume) AS v, count("none") AS n FROM read_parquet('${path}')`)).getRowObjectsJS()).toEqual([{ p: 10n, v: 8n, n: 0n }]);
  });

  it('a mostly distinct text column past the dictionary limit is written PLAIN over several pages, and reads back', async () => {
    const rows = PAGE_VALUES + 5000;
    const text = Array.from({ length: rows }, (_, i) => (i % 1000 === 0 ? null : `instrument name number ${i} ${'x'.repeat(i % 17)}`));
    // Distinct values alone weigh more than the limit.
    expect(text.reduce((n, t) => n + (t === null ? 0 : 4 + Buffer.byteLength(t)), 0)).toBeGreaterThan(DICTIONARY_MAX_BYTES);
    const file = toParquet({ columns: [{ name: 'name', type: 'utf8' }], chunks: [{ rows, values: [text] }] });
    expect(readByArrowRs(file).rows.map((r) => r.name)).toEqual(text);
    const { path, meta } = await writeAndDescribe('plain-text', file);
    expect(meta.map((m) => m.encodings)).toEqual(['PLAIN, RLE']);
    const tail = (await duck.runAndReadAll(`SELECT name FROM read_parquet('${path}') OFFSET ${PAGE_VALUES - 2}`)).getRowObjects().map((r) => r.name);
    expect(tail).toEqual(text.slice(PAGE_VALUES - 2));
  });

  it('an empty table is a file with the schema and no rows, for both readers', async () => {
    const table: TableData = { columns: COLUMNS, chunks: [] };
    const file = toParquet(table);
    expect(readByArrowRs(file).rows).toEqual([]);
    const { path } = await writeAndDescribe('empty', file);
    const described = (await duck.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${path}')`)).getRowObjectsJS();
    expect(described.map((d) => [d.column_name, d.column_type])).toEqual([['symbol', 'VARCHAR'], ['timestamp', 'TIMESTAMP WITH TIME ZONE'],
      ['price', 'DOUBLE'], ['volume', 'BIGINT'], ['name', 'VARCHAR'], ['flag', 'BOOLEAN'], ['day', 'DATE']]);
    expect((await duck.runAndReadAll(`SELECT count(*) AS n FROM read_parquet('${path}')`)).getRowObjectsJS()).toEqual([{ n: 0n }]);
  });

  it('a served answer carries the Arrow schema: arrow-rs gives the symbol column back as a dictionary', async () => {
    const t0 = Date.UTC(2024, 0, 2);
    const candles = (n: number) => ({
      timestamp: Array.from({ length: n }, (_, i) => t0 + i * DAY_MS), open: Array.from({ length: n }, (_, i) => 10 + i),
      high: Array.from({ length: n }, (_, i) => 11 + i), low: Array.from({ length: n }, (_, i) => 9 + i), close: Array.from({ length: n }, (_, i) => 10.5 + i),
      volume: Array.from({ length: n }, (_, i) => 1000 * i), amount: Array.from({ length: n }, (_, i) => 1e4 + i),
    });
    const file = await encodeTable('parquet', 'candles-batch', { data: { '600519.SH': candles(3), 'AAPL.US': candles(2) } });
    const { types, rows } = readByArrowRs(file);
    expect(types.slice(0, 3)).toEqual([['symbol', 'Dictionary<Int32, Utf8>'], ['timestamp', 'Timestamp<MILLISECOND, UTC>'], ['open', 'Float64']]);
    expect(rows.map((r) => r.symbol)).toEqual(['600519.SH', '600519.SH', '600519.SH', 'AAPL.US', 'AAPL.US']);
    expect(rows[4]).toMatchObject({ timestamp: BigInt(t0 + DAY_MS), volume: 1000n, prev_close: null });
  });

  it('frees its working buffers once the file is written', () => {
    const detached: number[] = [];
    const original = ArrayBuffer.prototype.transfer;
    const spy = vi.spyOn(ArrayBuffer.prototype, 'transfer').mockImplementation(function (this: ArrayBuffer, length?: number) {
      detached.push(this.byteLength);
      return original.call(this, length);
    });
    let file: Buffer;
    try {
      file = toParquet(randomTable(5000, 5));
    } finally {
      spy.mockRestore();
    }
    // Per column its values (8 bytes a row) and definition levels (1 byte a row).
    expect(detached.filter((n) => n === 5000 * 8)).toHaveLength(COLUMNS.length);
    expect(detached.filter((n) => n === 5000)).toHaveLength(COLUMNS.length);
    expect(readByArrowRs(file).rows).toHaveLength(5000);
  });
});
