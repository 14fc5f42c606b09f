// The Parquet writer (issue 26's format, rewritten for issue 30 item 3): one file, one row group,
// every column OPTIONAL (a JSON null is a Parquet null), Data Page V1 pages with ZSTD bodies
// (node:zlib's zstd), written here from the table's columns. It replaced parquet-wasm (arrow-rs
// compiled to WebAssembly), whose module, compiled code and never-shrinking linear memory cost
// ~28 MiB of resident memory for the life of the process once one Parquet answer had been asked
// for (BENCHMARKS.md, issue 30 item 3, thirteenth session).
//
// The file is what arrow-rs wrote for these tables, encoding for encoding:
//   float64             DOUBLE, BYTE_STREAM_SPLIT (the exponent bytes of prices compress well
//                       once split from their mantissas)
//   int64, timestamp    INT64, DELTA_BINARY_PACKED (ascending times, small steps); timestamp is
//                       TIMESTAMP(isAdjustedToUTC, MILLIS)
//   symbol, utf8        BYTE_ARRAY STRING, dictionary (a PLAIN dictionary page, RLE_DICTIONARY data)
//   date                INT32 DATE, dictionary
//   bool                BOOLEAN, PLAIN (bit-packed)
// with min/max statistics for the numeric columns, null counts for all, and the Arrow schema in the
// footer (`ARROW:schema`, as arrow-rs and pyarrow write it) so that pyarrow, polars and arrow-rs
// read the symbol columns back as dictionaries and timestamps with their zone. Format reference:
// https://github.com/apache/parquet-format (parquet.thrift, Encodings.md).
import { zstdCompressSync, constants as zlib } from 'node:zlib';
import type { Chunk, ColumnDef, TableData } from './tables.ts';

// ---- parquet.thrift enums -------------------------------------------------------------------

const TYPE = { BOOLEAN: 0, INT32: 1, INT64: 2, DOUBLE: 5, BYTE_ARRAY: 6 } as const;
const OPTIONAL = 1;
const ENC = { PLAIN: 0, RLE: 3, DELTA_BINARY_PACKED: 5, RLE_DICTIONARY: 8, BYTE_STREAM_SPLIT: 9 } as const;
const ZSTD = 6;
const PAGE = { DATA: 0, DICTIONARY: 2 } as const;
const CONVERTED = { UTF8: 0, DATE: 6, TIMESTAMP_MILLIS: 9 } as const;

/** Values a data page holds at most (arrow-rs cuts pages at ~1 MB; 64 Ki doubles are 512 KiB). */
export const PAGE_VALUES = 65_536;

/** ZSTD's level (arrow-rs's default is 1: the answers are written on a request's time). */
const ZSTD_LEVEL = 1;

/** zlib's smallest output chunk. */
const MIN_CHUNK = 64;

const CREATED_BY = 'mdqs parquet writer';

// ---- Thrift compact protocol ----------------------------------------------------------------

/** A Thrift value, by its compact-protocol type. */
type TValue =
  | { t: 'bool'; v: boolean }
  | { t: 'i32'; v: number }
  | { t: 'i64'; v: number }
  | { t: 'bin'; v: Uint8Array | string }
  | { t: 'struct'; v: TStruct }
  | { t: 'list'; of: 'i32' | 'bin' | 'struct'; v: TValue[] };
/** A struct's fields by id; absent (undefined) fields are not written. */
type TStruct = Array<[number, TValue | undefined]>;

const i32 = (v: number): TValue => ({ t: 'i32', v });
const i64 = (v: number): TValue => ({ t: 'i64', v });
const bin = (v: Uint8Array | string): TValue => ({ t: 'bin', v });
const bool = (v: boolean): TValue => ({ t: 'bool', v });
const struct = (v: TStruct): TValue => ({ t: 'struct', v });
const list = (of: 'i32' | 'bin' | 'struct', v: TValue[]): TValue => ({ t: 'list', of, v });
const EMPTY = struct([]);

const COMPACT = { TRUE: 1, FALSE: 2, I32: 5, I64: 6, BINARY: 8, LIST: 9, STRUCT: 12 } as const;
const compactType = (value: TValue): number => {
  switch (value.t) {
    case 'bool': return value.v ? COMPACT.TRUE : COMPACT.FALSE;
    case 'i32': return COMPACT.I32;
    case 'i64': return COMPACT.I64;
    case 'bin': return COMPACT.BINARY;
    case 'struct': return COMPACT.STRUCT;
    case 'list': return COMPACT.LIST;
  }
};
const ELEMENT_TYPE = { i32: COMPACT.I32, bin: COMPACT.BINARY, struct: COMPACT.STRUCT } as const;

/** A growable byte buffer with the writes Parquet needs. */
class Bytes {
  buf: Uint8Array;
  length = 0;
  constructor(capacity = 256) {
    this.buf = new Uint8Array(capacity);
  }
  reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    release(this.buf.buffer);
    this.buf = next;
  }
  byte(b: number): void {
    this.reserve(1);
    this.buf[this.length++] = b;
  }
  bytes(b: Uint8Array): void {
    this.reserve(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  int32LE(v: number): void {
    this.reserve(4);
    const b = this.buf;
    b[this.length] = v & 0xff;
    b[this.length + 1] = (v >>> 8) & 0xff;
    b[this.length + 2] = (v >>> 16) & 0xff;
    b[this.length + 3] = (v >>> 24) & 0xff;
    this.length += 4;
  }
  /** An unsigned varint of a non-negative integer up to 2^53 (ULEB128). */
  varint(v: number): void {
    while (v >= 128) {
      this.byte((v % 128) | 128);
      v = Math.floor(v / 128);
    }
    this.byte(v);
  }
  /** A zigzag varint of a safe integer (|v| < 2^52 keeps 2|v| exact). */
  zigzag(v: number): void {
    this.varint(v >= 0 ? 2 * v : -2 * v - 1);
  }
  view(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

const utf8 = new TextEncoder();

function writeValue(out: Bytes, value: TValue): void {
  switch (value.t) {
    case 'bool': out.byte(value.v ? COMPACT.TRUE : COMPACT.FALSE); break; // only inside lists
    case 'i32':
    case 'i64': out.zigzag(value.v); break;
    case 'bin': {
      const b = typeof value.v === 'string' ? utf8.encode(value.v) : value.v;
      out.varint(b.length);
      out.bytes(b);
      break;
    }
    case 'struct': writeStruct(out, value.v); break;
    case 'list': {
      const n = value.v.length;
      if (n < 15) out.byte((n << 4) | ELEMENT_TYPE[value.of]);
      else {
        out.byte(0xf0 | ELEMENT_TYPE[value.of]);
        out.varint(n);
      }
      for (const item of value.v) writeValue(out, item);
      break;
    }
  }
}

function writeStruct(out: Bytes, fields: TStruct): void {
  let last = 0;
  for (const [id, value] of fields) {
    if (value === undefined) continue;
    const type = compactType(value);
    const delta = id - last;
    if (delta > 0 && delta <= 15) out.byte((delta << 4) | type);
    else {
      out.byte(type);
      out.zigzag(id);
    }
    last = id;
    // A bool field's value is its type.
    if (value.t !== 'bool') writeValue(out, value);
  }
  out.byte(0);
}

// ---- encodings ------------------------------------------------------------------------------

/**
 * The RLE / bit-packing hybrid (Encodings.md), no length prefix: a run of 8 or more equal values
 * is an RLE run, anything else goes out in bit-packed groups of 8 (the last group padded with zeros).
 */
function rleHybrid(out: Bytes, values: ArrayLike<number>, n: number, width: number): void {
  const valueBytes = Math.ceil(width / 8);
  let i = 0;
  let groupsStart = -1; // the first value of the pending bit-packed run
  const flushPacked = (end: number) => {
    if (groupsStart < 0) return;
    const groups = Math.ceil((end - groupsStart) / 8);
    out.varint((groups << 1) | 1);
    bitPack(out, values, groupsStart, end, width, groups * 8);
    groupsStart = -1;
  };
  while (i < n) {
    const v = values[i];
    let j = i + 1;
    while (j < n && values[j] === v) j++;
    if (j - i >= 8) {
      flushPacked(i);
      out.varint((j - i) * 2);
      for (let b = 0; b < valueBytes; b++) out.byte(Math.floor(v / 2 ** (8 * b)) & 0xff);
      i = j;
    } else {
      if (groupsStart < 0) groupsStart = i;
      i = Math.min(n, i + 8);
    }
  }
  flushPacked(n);
}

/**
 * values[from..to) bit-packed LSB first at `width` bits (up to 53), padded with zero values to
 * `slots` values.
 */
function bitPack(out: Bytes, values: ArrayLike<number>, from: number, to: number, width: number, slots: number): void {
  const bytes = Math.ceil((slots * width) / 8);
  out.reserve(bytes);
  const buf = out.buf;
  const base = out.length;
  buf.fill(0, base, base + bytes);
  let bit = 0;
  for (let k = from; k < to; k++, bit += width) {
    let v = values[k];
    let at = bit;
    let left = width;
    // Byte by byte: v < 2^53, so the division stays exact.
    while (left > 0) {
      const offset = at & 7;
      const take = Math.min(8 - offset, left);
      const part = v % 2 ** take;
      buf[base + (at >> 3)] |= part << offset;
      v = (v - part) / 2 ** take;
      at += take;
      left -= take;
    }
  }
  out.length += bytes;
}

/** Bits needed for the unsigned integer v (0 for 0). */
function bitWidth(v: number): number {
  let w = 0;
  while (v >= 1) {
    v = Math.floor(v / 2);
    w += 1;
  }
  return w;
}

const DELTA_BLOCK = 128;
const DELTA_MINIBLOCKS = 4;
const MINIBLOCK = DELTA_BLOCK / DELTA_MINIBLOCKS;

/** DELTA_BINARY_PACKED (Encodings.md) of n safe integers whose magnitudes stay below 2^51. */
function deltaBinaryPacked(out: Bytes, values: Float64Array, n: number): void {
  out.varint(DELTA_BLOCK);
  out.varint(DELTA_MINIBLOCKS);
  out.varint(n);
  out.zigzag(n > 0 ? values[0] : 0);
  const deltas = new Float64Array(DELTA_BLOCK);
  for (let start = 1; start < n; start += DELTA_BLOCK) {
    const count = Math.min(DELTA_BLOCK, n - start);
    let min = Infinity;
    for (let k = 0; k < count; k++) {
      const d = values[start + k] - values[start + k - 1];
      deltas[k] = d;
      if (d < min) min = d;
    }
    out.zigzag(min);
    const widths: number[] = [];
    for (let m = 0; m < DELTA_MINIBLOCKS; m++) {
      let max = 0;
      for (let k = m * MINIBLOCK; k < Math.min(count, (m + 1) * MINIBLOCK); k++) max = Math.max(max, deltas[k] - min);
      widths.push(m * MINIBLOCK < count ? bitWidth(max) : 0);
    }
    for (const w of widths) out.byte(w);
    for (let k = 0; k < count; k++) deltas[k] -= min;
    for (let m = 0; m < DELTA_MINIBLOCKS && m * MINIBLOCK < count; m++) {
      // Miniblocks past the values are not written; a partial one is padded to its 32 slots.
      bitPack(out, deltas, m * MINIBLOCK, Math.min(count, (m + 1) * MINIBLOCK), widths[m], MINIBLOCK);
    }
  }
}

/** BYTE_STREAM_SPLIT of n doubles: byte b of every value, then byte b + 1 of every value. */
function byteStreamSplit(out: Bytes, values: Float64Array, from: number, n: number): void {
  const bytes = new Uint8Array(values.buffer, values.byteOffset + from * 8, n * 8);
  out.reserve(n * 8);
  const buf = out.buf;
  const base = out.length;
  for (let b = 0; b < 8; b++) {
    const stream = base + b * n;
    for (let k = 0; k < n; k++) buf[stream + k] = bytes[k * 8 + b];
  }
  out.length += n * 8;
}

// ---- columns --------------------------------------------------------------------------------

/** Every value of column `c` across the chunks, in row order. */
function* cells(chunks: readonly Chunk[], c: number): Generator<unknown> {
  for (const chunk of chunks) {
    const source = chunk.values[c];
    if ('constant' in source) {
      for (let row = 0; row < chunk.rows; row++) yield source.constant;
    } else {
      for (let row = 0; row < chunk.rows; row++) yield (source as ArrayLike<unknown>)[row];
    }
  }
}

const DAY_MS = 86_400_000;
/** Integers within ±2^51 go DELTA_BINARY_PACKED (deltas, and deltas less their minimum, stay exact). */
const DELTA_SAFE = 2 ** 51;

/** One column's non-null values, their definition levels (1 = present) and the statistics. */
interface ColumnValues {
  def: Uint8Array;
  count: number;
  nulls: number;
  /** Numbers (float64, int64, timestamp, date days, bool 0/1), or dictionary indices. */
  numbers: Float64Array;
  /** The dictionary, for dictionary columns (strings, or date days). */
  dictionary?: Array<string | number>;
  min: number;
  max: number;
}

function columnValues(def: ColumnDef, chunks: readonly Chunk[], c: number, rows: number): ColumnValues {
  const levels = new Uint8Array(rows);
  const numbers = new Float64Array(rows);
  let count = 0;
  let row = 0;
  let min = Infinity;
  let max = -Infinity;
  const dictionary: Array<string | number> = [];
  const positions = new Map<string | number, number>();
  const index = (key: string | number) => {
    let at = positions.get(key);
    if (at === undefined) {
      at = dictionary.length;
      positions.set(key, at);
      dictionary.push(key);
    }
    return at;
  };
  for (const v of cells(chunks, c)) {
    let value: number | undefined;
    switch (def.type) {
      case 'float64':
        if (typeof v === 'number' && Number.isFinite(v)) value = v;
        break;
      case 'int64':
      case 'timestamp':
        if (typeof v === 'number' && Number.isFinite(v)) value = Math.round(v);
        break;
      case 'bool':
        if (typeof v === 'boolean') value = v ? 1 : 0;
        break;
      case 'date': {
        const ms = typeof v === 'string' ? Date.parse(`${v}T00:00:00Z`) : Number.NaN;
        if (Number.isFinite(ms)) value = Math.floor(ms / DAY_MS);
        break;
      }
      case 'symbol':
      case 'utf8':
        if (typeof v === 'string') value = index(v);
        break;
    }
    if (value !== undefined) {
      if (def.type === 'date') {
        if (value < min) min = value;
        if (value > max) max = value;
        value = index(value);
      } else if (def.type !== 'symbol' && def.type !== 'utf8') {
        if (value < min) min = value;
        if (value > max) max = value;
      }
      levels[row] = 1;
      numbers[count++] = value;
    }
    row++;
  }
  const dictionaryType = def.type === 'symbol' || def.type === 'utf8' || def.type === 'date';
  return { def: levels, count, nulls: rows - count, numbers, dictionary: dictionaryType ? dictionary : undefined, min, max };
}

function physicalType(type: ColumnDef['type']): number {
  switch (type) {
    case 'float64': return TYPE.DOUBLE;
    case 'int64':
    case 'timestamp': return TYPE.INT64;
    case 'date': return TYPE.INT32;
    case 'bool': return TYPE.BOOLEAN;
    case 'symbol':
    case 'utf8': return TYPE.BYTE_ARRAY;
  }
}

function schemaElement(def: ColumnDef): TValue {
  const fields: TStruct = [[1, i32(physicalType(def.type))], [3, i32(OPTIONAL)], [4, bin(def.name)]];
  switch (def.type) {
    case 'timestamp':
      // TIMESTAMP(isAdjustedToUTC = true, unit = MILLIS)
      fields.push([6, i32(CONVERTED.TIMESTAMP_MILLIS)], [10, struct([[8, struct([[1, bool(true)], [2, struct([[1, EMPTY]])]])]])]);
      break;
    case 'date':
      fields.push([6, i32(CONVERTED.DATE)], [10, struct([[6, EMPTY]])]);
      break;
    case 'symbol':
    case 'utf8':
      fields.push([6, i32(CONVERTED.UTF8)], [10, struct([[1, EMPTY]])]);
      break;
  }
  return struct(fields);
}

/** A numeric statistic in its PLAIN form (the spec's -0.0 minimum and +0.0 maximum for floats). */
function plainStat(type: ColumnDef['type'], value: number, which: 'min' | 'max'): Uint8Array {
  if (type === 'float64') {
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setFloat64(0, value === 0 ? (which === 'min' ? -0 : 0) : value, true);
    return bytes;
  }
  if (type === 'date') {
    const bytes = new Uint8Array(4);
    new DataView(bytes.buffer).setInt32(0, value, true);
    return bytes;
  }
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigInt64(0, BigInt(value), true);
  return bytes;
}

/**
 * A page: its header (Thrift) and its ZSTD-compressed body, appended to `out`. Answers the page's
 * size with its header, compressed and not (ColumnMetaData counts the headers in both).
 */
function page(out: Bytes, body: Uint8Array, header: (uncompressed: number, compressed: number) => TStruct): { uncompressed: number; compressed: number } {
  // One output chunk the size of ZSTD's bound: zlib's default 16 KiB chunks, concatenated, left
  // the malloc heap fragmented (a loop of 4,000 page compressions: +58 MiB of RSS after GC, +2 so).
  const chunkSize = Math.max(MIN_CHUNK, body.length + (body.length >> 7) + 1024);
  const zstd = zstdCompressSync(body, { chunkSize, params: { [zlib.ZSTD_c_compressionLevel]: ZSTD_LEVEL } });
  const start = out.length;
  writeStruct(out, header(body.length, zstd.length));
  const headerBytes = out.length - start;
  out.bytes(zstd);
  return { uncompressed: headerBytes + body.length, compressed: headerBytes + zstd.length };
}

/** The column's pages (rows > 0), appended to `out`; answers its ColumnChunk and its uncompressed size. */
function writeColumn(out: Bytes, def: ColumnDef, values: ColumnValues, rows: number): { chunk: TValue; uncompressed: number } {
  const { numbers, dictionary } = values;
  const type = physicalType(def.type);
  let uncompressed = 0;
  let compressed = 0;
  let dictionaryOffset: number | undefined;
  const encodings = new Set<number>([ENC.RLE]);

  let valueEncoding: number;
  if (dictionary !== undefined) {
    valueEncoding = ENC.RLE_DICTIONARY;
    dictionaryOffset = out.length;
    const body = new Bytes(Math.max(64, dictionary.length * 8));
    for (const key of dictionary) {
      if (typeof key === 'number') body.int32LE(key);
      else {
        const b = utf8.encode(key);
        body.int32LE(b.length);
        body.bytes(b);
      }
    }
    const sizes = page(out, body.view(), (u, z) => [[1, i32(PAGE.DICTIONARY)], [2, i32(u)], [3, i32(z)],
      [7, struct([[1, i32(dictionary.length)], [2, i32(ENC.PLAIN)]])]]);
    uncompressed += sizes.uncompressed;
    compressed += sizes.compressed;
    release(body.buf.buffer);
    encodings.add(ENC.PLAIN);
  } else if (def.type === 'float64') valueEncoding = ENC.BYTE_STREAM_SPLIT;
  else if (def.type === 'bool') valueEncoding = ENC.PLAIN;
  else valueEncoding = values.min > -DELTA_SAFE && values.max < DELTA_SAFE ? ENC.DELTA_BINARY_PACKED : ENC.PLAIN;
  encodings.add(valueEncoding);

  const dataOffset = out.length;
  const indexWidth = dictionary === undefined ? 0 : Math.max(1, bitWidth(dictionary.length - 1));
  const body = new Bytes(1024);
  let value = 0; // the first non-null value of the page
  for (let first = 0; first < rows; first += PAGE_VALUES) {
    const pageRows = Math.min(PAGE_VALUES, rows - first);
    body.length = 0;
    // Definition levels: a 4-byte length, then the hybrid at width 1.
    body.int32LE(0);
    rleHybrid(body, values.def.subarray(first, first + pageRows), pageRows, 1);
    const levelsLength = body.length - 4;
    body.buf[0] = levelsLength & 0xff;
    body.buf[1] = (levelsLength >>> 8) & 0xff;
    body.buf[2] = (levelsLength >>> 16) & 0xff;
    body.buf[3] = (levelsLength >>> 24) & 0xff;
    let present = 0;
    for (let r = first; r < first + pageRows; r++) present += values.def[r];
    const slice = numbers.subarray(value, value + present);
    if (dictionary !== undefined) {
      body.byte(indexWidth);
      rleHybrid(body, slice, present, indexWidth);
    } else if (valueEncoding === ENC.BYTE_STREAM_SPLIT) byteStreamSplit(body, numbers, value, present);
    else if (valueEncoding === ENC.DELTA_BINARY_PACKED) deltaBinaryPacked(body, slice, present);
    else if (def.type === 'bool') {
      const packed = new Uint8Array(Math.ceil(present / 8));
      for (let k = 0; k < present; k++) if (slice[k] === 1) packed[k >> 3] |= 1 << (k & 7);
      body.bytes(packed);
    } else {
      const plain = new DataView(new ArrayBuffer(present * 8));
      for (let k = 0; k < present; k++) plain.setBigInt64(k * 8, BigInt(slice[k]), true);
      body.bytes(new Uint8Array(plain.buffer));
    }
    value += present;
    const sizes = page(out, body.view(), (u, z) => [[1, i32(PAGE.DATA)], [2, i32(u)], [3, i32(z)],
      [5, struct([[1, i32(pageRows)], [2, i32(valueEncoding)], [3, i32(ENC.RLE)], [4, i32(ENC.RLE)]])]]);
    uncompressed += sizes.uncompressed;
    compressed += sizes.compressed;
  }
  release(body.buf.buffer);

  const numeric = def.type !== 'symbol' && def.type !== 'utf8' && def.type !== 'bool' && values.count > 0;
  const statistics = struct([
    [3, i64(values.nulls)],
    [5, numeric ? bin(plainStat(def.type, values.max, 'max')) : undefined],
    [6, numeric ? bin(plainStat(def.type, values.min, 'min')) : undefined],
  ]);
  const meta = struct([
    [1, i32(type)],
    [2, list('i32', [...encodings].sort((a, b) => a - b).map(i32))],
    [3, list('bin', [bin(def.name)])],
    [4, i32(ZSTD)],
    [5, i64(rows)],
    [6, i64(uncompressed)],
    [7, i64(compressed)],
    [9, i64(dataOffset)],
    [11, dictionaryOffset === undefined ? undefined : i64(dictionaryOffset)],
    [12, statistics],
  ]);
  return { chunk: struct([[2, i64(dictionaryOffset ?? dataOffset)], [3, meta]]), uncompressed };
}

const MAGIC = utf8.encode('PAR1');

/**
 * The table as a Parquet file. `arrowSchema` is the Arrow IPC schema message the footer carries
 * as `ARROW:schema` (base64, as arrow-rs writes it), when the caller has one.
 */
export function toParquet(table: TableData, arrowSchema?: Uint8Array): Buffer {
  let rows = 0;
  for (const chunk of table.chunks) rows += chunk.rows;
  const out = new Bytes(4096 + rows * table.columns.length * 2);
  out.bytes(MAGIC);
  // No rows, no row group (as arrow-rs writes an empty table): the footer's schema alone.
  const rowGroups: TValue[] = [];
  if (rows > 0) {
    const chunks: TValue[] = [];
    let uncompressed = 0;
    table.columns.forEach((def, c) => {
      const values = columnValues(def, table.chunks, c, rows);
      const column = writeColumn(out, def, values, rows);
      release(values.numbers.buffer, values.def.buffer);
      chunks.push(column.chunk);
      uncompressed += column.uncompressed;
    });
    const compressed = out.length - MAGIC.length;
    rowGroups.push(struct([[1, list('struct', chunks)], [2, i64(uncompressed)], [3, i64(rows)], [5, i64(MAGIC.length)], [6, i64(compressed)]]));
  }
  const keyValues = arrowSchema === undefined ? [] : [struct([[1, bin('ARROW:schema')], [2, bin(Buffer.from(arrowSchema).toString('base64'))]])];
  const footer = [
    [1, i32(1)],
    [2, list('struct', [struct([[4, bin('arrow_schema')], [5, i32(table.columns.length)]]), ...table.columns.map(schemaElement)])],
    [3, i64(rows)],
    [4, list('struct', rowGroups)],
    [5, keyValues.length > 0 ? list('struct', keyValues) : undefined],
    [6, bin(CREATED_BY)],
    // TYPE_ORDER for every column: readers trust min_value / max_value only with a column order.
    [7, list('struct', table.columns.map(() => struct([[1, EMPTY]])))],
  ] satisfies TStruct;
  const footerStart = out.length;
  writeStruct(out, footer);
  out.int32LE(out.length - footerStart);
  out.bytes(MAGIC);
  const file = Buffer.allocUnsafeSlow(out.length);
  file.set(out.view());
  release(out.buf.buffer);
  return file;
}

/**
 * Frees working buffers now (ArrayBuffer.prototype.transfer(0) drops the backing store at once)
 * rather than at the next full GC: dead column buffers waiting for one fragmented the malloc heap
 * (BENCHMARKS.md, issue 30 item 3, twelfth session). Only buffers nothing else views.
 */
function release(...buffers: ArrayBufferLike[]): void {
  for (const buffer of buffers) if (buffer instanceof ArrayBuffer && !buffer.detached) buffer.transfer(0);
}
