// One table shape per resource (issue 26): the JSON body a route built, read as typed columns in
// chunks (a chunk is one symbol's run of rows in a batch, or the whole answer), without copying the
// values: a candle chunk's columns are the JSON arrays themselves, and a batch's `symbol` column is
// one constant per chunk. The encoders (encode.ts) write CSV, Arrow IPC and Parquet from this.
//
// Column names are the JSON field names; nested objects (a quote's or an instrument's `ext`) are
// flattened with a dot, as pandas.json_normalize names them (`ext.name`). Types:
//   timestamp  epoch ms → Arrow timestamp[ms, UTC], Parquet TIMESTAMP(MILLIS, UTC), CSV integer ms
//   float64    prices, amounts, ratios
//   int64      volumes, share counts (Arrow/Parquet int64; BigInt in JavaScript)
//   symbol     a string column dictionary-encoded in Arrow and Parquet (symbols, regions, types)
//   utf8       free text (names)
//   bool       parts_known
//   date       YYYY-MM-DD → Arrow date32[day], Parquet DATE, CSV as written
import { STATEMENT_FIELDS, type Statement } from '../../financials/types.ts';
import { ExFactor } from '../../schemas.ts';

export type ColumnType = 'timestamp' | 'float64' | 'int64' | 'symbol' | 'utf8' | 'bool' | 'date';

export interface ColumnDef {
  name: string;
  type: ColumnType;
}

/** One run of rows: per column either its values (indexed 0..rows-1) or one constant for all. */
export interface Chunk {
  rows: number;
  values: ReadonlyArray<ArrayLike<unknown> | { constant: unknown }>;
}

export interface TableData {
  columns: readonly ColumnDef[];
  chunks: readonly Chunk[];
}

// ---- cell rules, one place for every binary encoder (Arrow IPC, Parquet) ------------------------

const DAY_MS = 86_400_000;
/** int64 holds [-2^63, 2^63): a number outside it is a null, never a value wrapped modulo 2^64. */
const INT64_LIMIT = 2 ** 63;

/** An int64 or timestamp cell as an integer, or undefined for a null (not a finite number, or no int64 holds it). */
export function int64Cell(v: unknown): number | undefined {
  if (typeof v !== 'number' || !Number.isFinite(v)) return undefined;
  const n = Math.round(v);
  return n >= -INT64_LIMIT && n < INT64_LIMIT ? n : undefined;
}

const dateDays = new Map<string, number | undefined>();
/** A date cell (YYYY-MM-DD) as days since 1970-01-01, or undefined for a null. */
export function dateCell(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  if (dateDays.has(v)) return dateDays.get(v);
  const ms = Date.parse(`${v}T00:00:00Z`);
  const day = Number.isFinite(ms) ? Math.floor(ms / DAY_MS) : undefined;
  // Dates repeat across a statement's rows; the memo is bounded by the calendar's days (and cleared past it).
  if (dateDays.size >= 100_000) dateDays.clear();
  dateDays.set(v, day);
  return day;
}

/**
 * Frees an encoder's working buffers now (ArrayBuffer.prototype.transfer(0) drops the backing
 * store at once) rather than at the next full GC: dead column buffers waiting for one fragmented
 * the malloc heap (BENCHMARKS.md, issue 30 item 3, twelfth session). Only buffers nothing else views.
 */
export function releaseBuffers(buffers: Iterable<ArrayBufferLike>, keep?: ArrayBufferLike): void {
  for (const buffer of buffers) if (buffer !== keep && buffer instanceof ArrayBuffer && !buffer.detached) buffer.transfer(0);
}

/** What a route's answer is, as a table. Routes that do not name one answer JSON only. */
export type TableKind = 'candles' | 'candles-batch' | 'market-day' | 'ex-factors' | 'quotes' | 'instruments' | `financials:${Statement}`;

const CANDLE_COLUMNS: ColumnDef[] = [
  { name: 'timestamp', type: 'timestamp' },
  { name: 'open', type: 'float64' },
  { name: 'high', type: 'float64' },
  { name: 'low', type: 'float64' },
  { name: 'close', type: 'float64' },
  { name: 'volume', type: 'int64' },
  { name: 'amount', type: 'float64' },
  { name: 'prev_close', type: 'float64' },
];

/** Futures columns, present in a table only when its data has them (equity tables keep their shape). */
const FUTURES_CANDLE_COLUMNS: ColumnDef[] = [
  { name: 'open_interest', type: 'int64' },
  { name: 'settlement_price', type: 'float64' },
];
const FUTURES_QUOTE_COLUMNS: ColumnDef[] = [
  { name: 'ext.open_interest', type: 'int64' },
  { name: 'ext.settlement_price', type: 'float64' },
  { name: 'ext.prev_settlement_price', type: 'float64' },
];
const FUTURES_INSTRUMENT_COLUMNS: ColumnDef[] = [
  { name: 'ext.multiplier', type: 'float64' },
  { name: 'ext.last_trade_date', type: 'date' },
  { name: 'ext.product', type: 'symbol' },
  { name: 'ext.main_contract', type: 'bool' },
];

const EX_FACTOR_PARTS = Object.keys((ExFactor as unknown as { properties: Record<string, unknown> }).properties)
  .filter((name) => name !== 'timestamp' && name !== 'ex_factor');
const EX_FACTOR_COLUMNS: ColumnDef[] = [
  { name: 'symbol', type: 'symbol' },
  { name: 'timestamp', type: 'timestamp' },
  { name: 'ex_factor', type: 'float64' },
  ...EX_FACTOR_PARTS.map((name): ColumnDef => ({ name, type: name === 'parts_known' ? 'bool' : 'float64' })),
];

const QUOTE_COLUMNS: ColumnDef[] = [
  { name: 'symbol', type: 'symbol' },
  { name: 'region', type: 'symbol' },
  { name: 'last_price', type: 'float64' },
  { name: 'open', type: 'float64' },
  { name: 'high', type: 'float64' },
  { name: 'low', type: 'float64' },
  { name: 'prev_close', type: 'float64' },
  { name: 'volume', type: 'int64' },
  { name: 'amount', type: 'float64' },
  { name: 'timestamp', type: 'timestamp' },
  { name: 'session', type: 'symbol' },
  { name: 'ext.type', type: 'symbol' },
  { name: 'ext.name', type: 'utf8' },
  { name: 'ext.amplitude', type: 'float64' },
  { name: 'ext.change_amount', type: 'float64' },
  { name: 'ext.change_pct', type: 'float64' },
  { name: 'ext.turnover_rate', type: 'float64' },
];

const INSTRUMENT_COLUMNS: ColumnDef[] = [
  { name: 'code', type: 'utf8' },
  { name: 'exchange', type: 'symbol' },
  { name: 'name', type: 'utf8' },
  { name: 'region', type: 'symbol' },
  { name: 'symbol', type: 'symbol' },
  { name: 'type', type: 'symbol' },
  { name: 'ext.type', type: 'symbol' },
  { name: 'ext.float_shares', type: 'float64' },
  { name: 'ext.limit_down', type: 'float64' },
  { name: 'ext.limit_up', type: 'float64' },
  { name: 'ext.listing_date', type: 'date' },
  { name: 'ext.tick_size', type: 'float64' },
  { name: 'ext.total_shares', type: 'float64' },
  { name: 'ext.lot_size', type: 'int64' },
];

function financialColumns(statement: Statement): ColumnDef[] {
  return [
    { name: 'symbol', type: 'symbol' },
    { name: 'period_end', type: 'date' },
    { name: 'announce_date', type: 'date' },
    { name: 'currency', type: 'symbol' },
    { name: 'period_months', type: 'int64' },
    // float64 even for share counts: the records' schema says number, and a vendor's figure is never rounded here.
    ...STATEMENT_FIELDS[statement].map((name): ColumnDef => ({ name, type: 'float64' })),
  ];
}

/** The columns of a table kind, in order (the OpenAPI document lists them too). */
export function columnsOf(kind: TableKind): readonly ColumnDef[] {
  switch (kind) {
    case 'candles': return CANDLE_COLUMNS;
    case 'candles-batch':
    case 'market-day': return [{ name: 'symbol', type: 'symbol' }, ...CANDLE_COLUMNS];
    case 'ex-factors': return EX_FACTOR_COLUMNS;
    case 'quotes': return QUOTE_COLUMNS;
    case 'instruments': return INSTRUMENT_COLUMNS;
    default: return financialColumns(kind.slice('financials:'.length) as Statement);
  }
}

type Row = Record<string, unknown>;

/** A field of a record by its flattened name (`ext.name` → record.ext.name); undefined when absent. */
function field(record: Row, name: string): unknown {
  const dot = name.indexOf('.');
  if (dot < 0) return record[name];
  const inner = record[name.slice(0, dot)];
  return inner !== null && typeof inner === 'object' ? (inner as Row)[name.slice(dot + 1)] : undefined;
}

/** Records as one chunk of columns (one pass per column; `constants` fill columns not in the records). */
function recordsChunk(columns: readonly ColumnDef[], records: readonly Row[], constants: Record<string, unknown> = {}): Chunk {
  const values = columns.map((column) => {
    if (column.name in constants) return { constant: constants[column.name] };
    const out = new Array<unknown>(records.length);
    for (let i = 0; i < records.length; i++) out[i] = field(records[i], column.name);
    return out;
  });
  return { rows: records.length, values };
}

interface CandleColumns {
  timestamp: readonly number[];
  prev_close?: readonly number[];
  [name: string]: readonly number[] | undefined;
}

function candleChunk(candles: CandleColumns, symbol?: string, extras: readonly ColumnDef[] = []): Chunk {
  const rows = candles.timestamp.length;
  const values: Chunk['values'][number][] = [];
  if (symbol !== undefined) values.push({ constant: symbol });
  for (const column of CANDLE_COLUMNS) values.push(candles[column.name] ?? { constant: null });
  for (const column of extras) values.push(candles[column.name] ?? { constant: null });
  return { rows, values };
}

/** The futures candle columns any of `series` has. */
function candleExtras(series: readonly CandleColumns[]): ColumnDef[] {
  return FUTURES_CANDLE_COLUMNS.filter((column) => series.some((c) => c[column.name] !== undefined));
}

/** The futures ext columns, when any record is a futures contract's. */
function recordExtras(records: readonly Row[], extras: readonly ColumnDef[]): readonly ColumnDef[] {
  return records.some((r) => (r.ext as Row | undefined)?.type === 'cn_futures') ? extras : [];
}

/** The JSON body `{data: …}` of a table route as a table. */
export function tableOf(kind: TableKind, body: unknown): TableData {
  const data = (body as { data: unknown }).data;
  const columns = columnsOf(kind);
  switch (kind) {
    case 'candles': {
      const extras = candleExtras([data as CandleColumns]);
      return { columns: [...columns, ...extras], chunks: [candleChunk(data as CandleColumns, undefined, extras)] };
    }
    case 'candles-batch': {
      const entries = Object.entries(data as Record<string, CandleColumns>);
      const extras = candleExtras(entries.map(([, candles]) => candles));
      return { columns: [...columns, ...extras], chunks: entries.map(([symbol, candles]) => candleChunk(candles, symbol, extras)) };
    }
    case 'market-day': {
      // Already one columnar table with its symbol column (routes/market-day.ts).
      const table = data as CandleColumns & { symbol: readonly string[] };
      return { columns, chunks: [{ rows: table.timestamp.length, values: [table.symbol, ...candleChunk(table).values] }] };
    }
    case 'quotes':
    case 'instruments': {
      const all = [...columns, ...recordExtras(data as Row[], kind === 'quotes' ? FUTURES_QUOTE_COLUMNS : FUTURES_INSTRUMENT_COLUMNS)];
      return { columns: all, chunks: [recordsChunk(all, data as Row[])] };
    }
    default:
      // ex-factors and financials: {[symbol]: record[]} in long form.
      return {
        columns,
        chunks: Object.entries(data as Record<string, Row[]>).map(([symbol, records]) => recordsChunk(columns, records, { symbol })),
      };
  }
}
