// Issue 39 item 7: the hand-written Parquet writer (src/http/formats/parquet.ts) against
// hyparquet-writer (pure JavaScript, maintained), on the tables the service writes: a research
// batch (100 symbols × 1,000 daily bars, 100,000 rows) and a whole-market day (5,000 symbols,
// one bar each). Both write one row group, ZSTD pages (node:zlib's zstd for both), min/max
// statistics and the ARROW:schema footer entry, with the same column types (symbol as dictionary
// strings, timestamp as TIMESTAMP(MILLIS, UTC), volume INT64, prices DOUBLE, prev_close nullable).
// Reported: median encode time over BENCH_ITERATIONS runs (interleaved), bytes, and whether DuckDB
// reads each file back equal to the table. hyparquet-writer is not a dependency: install it for
// the run with `npm install --no-save hyparquet-writer` (or set HYPARQUET_WRITER to its path).
//   node bench/suites/parquet-writer.ts    (BENCH_ITERATIONS=15)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zstdCompressSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { encodeTable } from '../../src/http/formats/encode.ts';
import { envNumber } from '../lib/report.ts';
import { median } from '../lib/stats.ts';

const ITERATIONS = envNumber('BENCH_ITERATIONS', 15, 3);
const log = (line: string) => process.stdout.write(`${line}\n`);

type Hyparquet = { parquetWriteBuffer(options: Record<string, unknown>): ArrayBuffer };
const specifier = process.env.HYPARQUET_WRITER ?? 'hyparquet-writer';
let hyparquet: Hyparquet;
try {
  hyparquet = (await import(specifier)) as Hyparquet;
} catch {
  log(`hyparquet-writer not found (${specifier}): npm install --no-save hyparquet-writer, or HYPARQUET_WRITER=/path/to/hyparquet-writer/src/index.js`);
  process.exit(2);
}

interface Columns {
  symbol: string[]; timestamp: number[]; open: number[]; high: number[]; low: number[]; close: number[];
  volume: number[]; amount: number[]; prev_close: (number | null)[];
}

/** Deterministic candles: `symbols` × `bars` daily bars with two-decimal prices. */
function table(symbols: number, bars: number): Columns {
  const c: Columns = { symbol: [], timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [], prev_close: [] };
  let seed = 1;
  const rand = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
  for (let s = 0; s < symbols; s++) {
    const symbol = `${String(600000 + s).padStart(6, '0')}.SH`;
    let price = 10 + rand() * 90;
    for (let b = 0; b < bars; b++) {
      const prev = price;
      price = Math.max(1, price * (1 + (rand() - 0.5) * 0.04));
      const round = (x: number) => Math.round(x * 100) / 100;
      const open = round(prev * (1 + (rand() - 0.5) * 0.01));
      const close = round(price);
      c.symbol.push(symbol);
      c.timestamp.push(Date.UTC(2022, 0, 3) + b * 86_400_000 - 8 * 3_600_000);
      c.open.push(open);
      c.high.push(round(Math.max(open, close) * (1 + rand() * 0.01)));
      c.low.push(round(Math.min(open, close) * (1 - rand() * 0.01)));
      c.close.push(close);
      c.volume.push(Math.round(rand() * 1e7) * 100);
      c.amount.push(round(close * rand() * 1e9));
      c.prev_close.push(b === 0 ? null : round(prev));
    }
  }
  return c;
}

/** The ARROW:schema entry the service's writer puts in the footer (the same bytes for both). */
async function arrowSchemaOf(ours: Buffer): Promise<string | undefined> {
  const text = ours.toString('latin1');
  const at = text.indexOf('ARROW:schema');
  if (at < 0) return undefined;
  const match = /[A-Za-z0-9+/=]{40,}/.exec(text.slice(at, at + 100_000));
  return match?.[0];
}

/** `bigints`: int64 columns already as BigInt (the table holds numbers: converting them is part of adopting it). */
function hyparquetEncode(c: Columns, arrowSchema: string | undefined, bigints?: { timestamp: bigint[]; volume: bigint[] }): Uint8Array {
  const int64 = (xs: number[]) => (xs === c.timestamp && bigints ? bigints.timestamp : xs === c.volume && bigints ? bigints.volume : xs.map((x) => BigInt(x)));
  const buffer = hyparquet.parquetWriteBuffer({
    columnData: [
      { name: 'symbol', data: c.symbol },
      { name: 'timestamp', data: int64(c.timestamp) },
      { name: 'open', data: c.open },
      { name: 'high', data: c.high },
      { name: 'low', data: c.low },
      { name: 'close', data: c.close },
      { name: 'volume', data: int64(c.volume) },
      { name: 'amount', data: c.amount },
      { name: 'prev_close', data: c.prev_close },
    ],
    schema: [
      { name: 'root', num_children: 9 },
      { name: 'symbol', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
      { name: 'timestamp', type: 'INT64', repetition_type: 'OPTIONAL', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' } },
      ...['open', 'high', 'low', 'close'].map((name) => ({ name, type: 'DOUBLE', repetition_type: 'OPTIONAL' })),
      { name: 'volume', type: 'INT64', repetition_type: 'OPTIONAL' },
      { name: 'amount', type: 'DOUBLE', repetition_type: 'OPTIONAL' },
      { name: 'prev_close', type: 'DOUBLE', repetition_type: 'OPTIONAL' },
    ],
    codec: 'ZSTD',
    compressors: { ZSTD: (bytes: Uint8Array) => new Uint8Array(zstdCompressSync(bytes)) },
    rowGroupSize: c.timestamp.length,
    statistics: true,
    kvMetadata: arrowSchema === undefined ? [] : [{ key: 'ARROW:schema', value: arrowSchema }],
  });
  return new Uint8Array(buffer);
}

const dir = mkdtempSync(join(tmpdir(), 'mdqs-parquet-writer-'));
const duck = await (await DuckDBInstance.create(':memory:')).connect();

/** DuckDB's rows of a file, as comparable values. */
async function readBack(file: string): Promise<string> {
  const result = await duck.runAndReadAll(`SELECT symbol, epoch_ms(timestamp) AS ts, open, high, low, close, volume, amount, prev_close FROM read_parquet('${file}')`);
  return JSON.stringify(result.getRows(), (_, v) => (typeof v === 'bigint' ? Number(v) : v));
}

const CASES = [
  { name: '100 symbols × 1,000 daily bars (100,000 rows)', columns: table(100, 1000) },
  { name: 'market day: 5,000 symbols × 1 bar', columns: table(5000, 1) },
];

log(`# Parquet writers, median of ${ITERATIONS} interleaved encodes (node ${process.version})`);
log('| table | writer | encode ms (median) | bytes | DuckDB reads it back equal |');
log('|---|---|---:|---:|---|');
for (const { name, columns } of CASES) {
  const body = { data: columns };
  const ours = await encodeTable('parquet', 'market-day', body);
  const schema = await arrowSchemaOf(ours);
  const theirs = hyparquetEncode(columns, schema);
  const bigints = { timestamp: columns.timestamp.map((x) => BigInt(x)), volume: columns.volume.map((x) => BigInt(x)) };
  const times = { ours: [] as number[], theirs: [] as number[], theirsBig: [] as number[] };
  for (let i = 0; i < ITERATIONS + 2; i++) {
    let t = performance.now();
    await encodeTable('parquet', 'market-day', body);
    const a = performance.now() - t;
    t = performance.now();
    hyparquetEncode(columns, schema);
    const b = performance.now() - t;
    t = performance.now();
    hyparquetEncode(columns, schema, bigints);
    const c = performance.now() - t;
    // The first two of each are warm-up.
    if (i >= 2) { times.ours.push(a); times.theirs.push(b); times.theirsBig.push(c); }
  }
  writeFileSync(join(dir, 'ours.parquet'), ours);
  writeFileSync(join(dir, 'theirs.parquet'), theirs);
  const expected = await readBack(join(dir, 'ours.parquet'));
  const equal = (await readBack(join(dir, 'theirs.parquet'))) === expected;
  const mo = median(times.ours);
  const mt = median(times.theirs);
  log(`| ${name} | src/http/formats/parquet.ts | ${mo.toFixed(2)} | ${ours.length} | yes (reference) |`);
  const mb = median(times.theirsBig);
  log(`| ${name} | hyparquet-writer | ${mt.toFixed(2)} (${((mt / mo - 1) * 100).toFixed(0)} % vs ours) | ${theirs.length} | ${equal ? 'yes' : 'NO'} |`);
  log(`| ${name} | hyparquet-writer, int64 columns handed over as BigInt (conversion not timed) | ${mb.toFixed(2)} (${((mb / mo - 1) * 100).toFixed(0)} % vs ours) | ${theirs.length} | (same file) |`);
}
duck.closeSync();
rmSync(dir, { recursive: true, force: true });
