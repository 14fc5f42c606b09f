// The Parquet writer (issue 26's format, rewritten for issue 30 item 3): one file, one row group,
// every column OPTIONAL (a JSON null is a Parquet null), Data Page V1 pages with ZSTD bodies
// (node:zlib's zstd), written here from the table's columns. It replaced parquet-wasm (arrow-rs
// compiled to WebAssembly), whose module, compiled code and never-shrinking linear memory stayed
// resident for the life of the process once one Parquet answer had been asked for (BENCHMARKS.md,
// issue 30 item 3, thirteenth session).
//
// Encodings are the ones every Parquet reader decodes (Spark's vectorized reader included, which
// rejects BYTE_STREAM_SPLIT, as pyarrow 16.0.0 did with nulls in V1 pages):
//   float64             DOUBLE, PLAIN
//   int64, timestamp    INT64, PLAIN; timestamp is TIMESTAMP(isAdjustedToUTC, MILLIS)
//   symbol, utf8        BYTE_ARRAY STRING, dictionary (a PLAIN dictionary page, RLE_DICTIONARY
//                       data; PLAIN once the dictionary passes 1 MiB, as arrow-rs falls back)
//   date                INT32 DATE, dictionary
//   bool                BOOLEAN, PLAIN (bit-packed)
// ZSTD does the rest: on 100 × 1,000 synthetic daily bars with two-decimal prices PLAIN doubles came
// out 22 % smaller than BYTE_STREAM_SPLIT and PLAIN int64 1 % larger than DELTA_BINARY_PACKED; the
// sim's 100 × 1,000-bar answer in bench/suites/formats-wire.ts came out 1.4 % larger than before. Min/max statistics for the
// numeric columns, null counts for all, and the Arrow schema in the footer (`ARROW:schema`, as
// arrow-rs and pyarrow write it) so that pyarrow, polars and arrow-rs read the symbol columns back
// as dictionaries and timestamps with their zone. Integers beyond ±2^63 (no int64 holds them) are
// nulls, as non-finite numbers are. Format reference: https://github.com/apache/parquet-format
// (parquet.thrift, Encodings.md).
import { zstdCompressSync, constants as zlib } from 'node:zlib';
import { dateCell, int64Cell, releaseBuffers, type ColumnDef, type TableData } from './tables.ts';

// ---- parquet.thrift enums -------------------------------------------------------------------

const TYPE = { BOOLEAN: 0, INT32: 1, INT64: 2, DOUBLE: 5, BYTE_ARRAY: 6 } as const;
const OPTIONAL = 1;
const ENC = { PLAIN: 0, RLE: 3, RLE_DICTIONARY: 8 } as const;
const ZSTD = 6;
const PAGE = { DATA: 0, DICTIONARY: 2 } as const;
const CONVERTED = { UTF8: 0, DATE: 6, TIMESTAMP_MILLIS: 9 } as const;

/** Values a data page holds at most (64 Ki doubles are 512 KiB; arrow-rs cuts pages at ~1 MB). */
export const PAGE_VALUES = 65_536;

/** A dictionary past this many bytes is dropped for PLAIN values (arrow-rs's default limit). */
export const DICTIONARY_MAX_BYTES = 1_048_576;

/** ZSTD's level (arrow-rs's default is 1: the answers are written on a request's time). */
const ZSTD_LEVEL = 1;

/** zlib's smallest output chunk. (Its output buffers cannot be detached: they wait for a GC.) */
const MIN_CHUNK = 64;

const CREATED_BY = 'mdqs';

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
    releaseBuffers([this.buf.buffer]);
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
 * The RLE / bit-packing hybrid (Encodings.md), no length prefix, for widths up to 32: a run of 8
 * or more equal values is an RLE run, anything else goes out in bit-packed groups of 8 (so a
 * bit-packed run always ends on a whole group before an RLE run; only the last group is padded).
 */
function rleHybrid(out: Bytes, values: ArrayLike<number>, n: number, width: number): void {
  const valueBytes = Math.ceil(width / 8);
  let i = 0;
  let groupsStart = -1; // the first value of the pending bit-packed run
  const flushPacked = (end: number) => {
    if (groupsStart < 0) return;
    const groups = Math.ceil((end - groupsStart) / 8);
    out.varint(groups * 2 + 1);
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
      for (let b = 0; b < valueBytes; b++) out.byte((v >>> (8 * b)) & 0xff);
      i = j;
    } else {
      if (groupsStart < 0) groupsStart = i;
      i = Math.min(n, i + 8);
    }
  }
  flushPacked(n);
}

/** values[from..to) bit-packed LSB first at `width` bits (1 to 32), padded with zeros to `slots` values. */
function bitPack(out: Bytes, values: ArrayLike<number>, from: number, to: number, width: number, slots: number): void {
  const bytes = Math.ceil((slots * width) / 8);
  out.reserve(bytes);
  const buf = out.buf;
  const base = out.length;
  buf.fill(0, base, base + bytes);
  let bit = 0;
  for (let k = from; k < to; k++, bit += width) {
    let v = values[k] >>> 0;
    let at = bit;
    let left = width;
    while (left > 0) {
      const offset = at & 7;
      const take = Math.min(8 - offset, left);
      buf[base + (at >> 3)] |= (v & ((1 << take) - 1)) << offset;
      v >>>= take;
      at += take;
      left -= take;
    }
  }
  out.length += bytes;
}

/** Bits needed for the unsigned integer v (0 for 0). */
function bitWidth(v: number): number {
  return v === 0 ? 0 : 32 - Math.clz32(v);
}

// ---- columns --------------------------------------------------------------------------------

const LITTLE_ENDIAN = new Uint8Array(new Float64Array([1]).buffer)[7] === 0x3f;

/** One column's non-null values, their definition levels (1 = present) and the statistics. */
interface ColumnValues {
  def: Uint8Array;
  count: number;
  nulls: number;
  /** The values in row order (float64, int64, timestamp, bool 0/1), or dictionary indices. */
  numbers: Float64Array;
  /** The dictionary, for dictionary columns (strings, or date days), in first-seen order. */
  dictionary?: Array<string | number>;
  min: number;
  max: number;
}

/** A cell's value as a number (a dictionary key for strings and dates), or undefined for null. */
type Reader = (v: unknown) => number | string | undefined;

function readerOf(type: ColumnDef['type']): Reader {
  switch (type) {
    case 'float64': return (v) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
    case 'int64':
    case 'timestamp': return int64Cell;
    case 'bool': return (v) => (typeof v === 'boolean' ? (v ? 1 : 0) : undefined);
    case 'date': return dateCell;
    case 'symbol':
    case 'utf8': return (v) => (typeof v === 'string' ? v : undefined);
  }
}

function columnValues(def: ColumnDef, table: TableData, c: number, rows: number): ColumnValues {
  const levels = new Uint8Array(rows);
  const numbers = new Float64Array(rows);
  const read = readerOf(def.type);
  const keyed = def.type === 'symbol' || def.type === 'utf8' || def.type === 'date';
  const dictionary: Array<string | number> = [];
  const positions = new Map<string | number, number>();
  let count = 0;
  let row = 0;
  let min = Infinity;
  let max = -Infinity;
  /** The number stored for a value: itself, or its dictionary index. */
  const store = (value: number | string): number => {
    if (typeof value === 'number') {
      if (value < min) min = value;
      if (value > max) max = value;
    }
    if (!keyed) return value as number;
    let at = positions.get(value);
    if (at === undefined) {
      at = dictionary.length;
      positions.set(value, at);
      dictionary.push(value);
    }
    return at;
  };
  for (const chunk of table.chunks) {
    const source = chunk.values[c];
    if ('constant' in source) {
      // A batch's symbol: one value for the chunk.
      const value = read(source.constant);
      if (value === undefined) {
        row += chunk.rows;
        continue;
      }
      const stored = store(value);
      levels.fill(1, row, row + chunk.rows);
      numbers.fill(stored, count, count + chunk.rows);
      row += chunk.rows;
      count += chunk.rows;
      continue;
    }
    const values = source as ArrayLike<unknown>;
    for (let r = 0; r < chunk.rows; r++, row++) {
      const value = read(values[r]);
      if (value === undefined) continue;
      levels[row] = 1;
      numbers[count++] = store(value);
    }
  }
  return { def: levels, count, nulls: rows - count, numbers, dictionary: keyed ? dictionary : undefined, min, max };
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

/** Writes the int64 v (an integer in [-2^63, 2^63)) little-endian at `at`. */
function int64At(buf: Uint8Array, at: number, v: number): void {
  // hi * 2^32 + lo with 0 <= lo < 2^32: exact for every integer double in range.
  const hi = Math.floor(v / 4_294_967_296);
  const lo = v - hi * 4_294_967_296;
  for (let b = 0; b < 4; b++) buf[at + b] = (lo >>> (8 * b)) & 0xff;
  for (let b = 0; b < 4; b++) buf[at + 4 + b] = (hi >> (8 * b)) & 0xff;
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
  int64At(bytes, 0, value);
  return bytes;
}

/** The file as it is written: pieces (page headers, compressed bodies) and their total length. */
class FileParts {
  readonly parts: Uint8Array[] = [];
  length = 0;
  push(part: Uint8Array): void {
    this.parts.push(part);
    this.length += part.length;
  }
}

/**
 * A page: its header (Thrift) and its ZSTD-compressed body. Answers the page's size with its header,
 * compressed and not (ColumnMetaData counts the headers in both).
 */
function page(file: FileParts, body: Uint8Array, header: (uncompressed: number, compressed: number) => TStruct): { uncompressed: number; compressed: number } {
  // One output chunk the size of ZSTD's bound: zlib's default 16 KiB chunks, concatenated, left
  // the malloc heap fragmented (a loop of 4,000 page compressions: +58 MiB of RSS after GC, +2 so).
  const chunkSize = Math.max(MIN_CHUNK, body.length + (body.length >> 7) + 1024);
  const zstd = zstdCompressSync(body, { chunkSize, params: { [zlib.ZSTD_c_compressionLevel]: ZSTD_LEVEL } });
  const head = new Bytes(64);
  writeStruct(head, header(body.length, zstd.length));
  file.push(head.view());
  file.push(zstd);
  return { uncompressed: head.length + body.length, compressed: head.length + zstd.length };
}

/** The column's pages (rows > 0), appended to `file`; answers its ColumnChunk and its uncompressed size. */
function writeColumn(file: FileParts, body: Bytes, def: ColumnDef, values: ColumnValues, rows: number): { chunk: TValue; uncompressed: number } {
  const { numbers } = values;
  const type = physicalType(def.type);
  let uncompressed = 0;
  let compressed = 0;
  let dictionaryOffset: number | undefined;
  const encodings = new Set<number>([ENC.RLE, ENC.PLAIN]);

  let dictionary = values.dictionary;
  if (dictionary !== undefined) {
    body.length = 0;
    for (const key of dictionary) {
      if (typeof key === 'number') body.int32LE(key);
      else {
        const b = utf8.encode(key);
        body.int32LE(b.length);
        body.bytes(b);
      }
      if (body.length > DICTIONARY_MAX_BYTES) break;
    }
    if (body.length > DICTIONARY_MAX_BYTES) dictionary = undefined; // mostly distinct: PLAIN values
    else {
      dictionaryOffset = file.length;
      const sizes = page(file, body.view(), (u, z) => [[1, i32(PAGE.DICTIONARY)], [2, i32(u)], [3, i32(z)],
        [7, struct([[1, i32(dictionary!.length)], [2, i32(ENC.PLAIN)]])]]);
      uncompressed += sizes.uncompressed;
      compressed += sizes.compressed;
      encodings.add(ENC.RLE_DICTIONARY);
    }
  }
  const valueEncoding = dictionary !== undefined ? ENC.RLE_DICTIONARY : ENC.PLAIN;

  const dataOffset = file.length;
  // At least 1 bit (an all-null column has an empty dictionary and no indices).
  const indexWidth = dictionary === undefined ? 0 : Math.max(1, bitWidth(Math.max(0, dictionary.length - 1)));
  let value = 0; // the page's first non-null value
  for (let first = 0; first < rows; first += PAGE_VALUES) {
    const pageRows = Math.min(PAGE_VALUES, rows - first);
    body.length = 0;
    // Definition levels: a 4-byte length, then the hybrid at width 1.
    body.int32LE(0);
    rleHybrid(body, values.def.subarray(first, first + pageRows), pageRows, 1);
    const levelsLength = body.length - 4;
    new DataView(body.buf.buffer, body.buf.byteOffset).setInt32(0, levelsLength, true);
    let present = 0;
    for (let r = first; r < first + pageRows; r++) present += values.def[r];
    const slice = numbers.subarray(value, value + present);
    if (dictionary !== undefined) {
      body.byte(indexWidth);
      rleHybrid(body, slice, present, indexWidth);
    } else if (values.dictionary !== undefined) {
      // The dictionary was dropped: each value in full (BYTE_ARRAY, or INT32 days).
      for (let k = 0; k < present; k++) {
        const key = values.dictionary[slice[k]];
        if (typeof key === 'number') body.int32LE(key);
        else {
          const b = utf8.encode(key);
          body.int32LE(b.length);
          body.bytes(b);
        }
      }
    } else if (def.type === 'bool') {
      body.reserve(Math.ceil(present / 8));
      const at = body.length;
      body.buf.fill(0, at, at + Math.ceil(present / 8));
      for (let k = 0; k < present; k++) if (slice[k] === 1) body.buf[at + (k >> 3)] |= 1 << (k & 7);
      body.length += Math.ceil(present / 8);
    } else if (def.type === 'float64') {
      if (LITTLE_ENDIAN) body.bytes(new Uint8Array(slice.buffer, slice.byteOffset, present * 8));
      else {
        body.reserve(present * 8);
        const view = new DataView(body.buf.buffer, body.buf.byteOffset);
        for (let k = 0; k < present; k++) view.setFloat64(body.length + k * 8, slice[k], true);
        body.length += present * 8;
      }
    } else {
      body.reserve(present * 8);
      for (let k = 0; k < present; k++) int64At(body.buf, body.length + k * 8, slice[k]);
      body.length += present * 8;
    }
    value += present;
    const sizes = page(file, body.view(), (u, z) => [[1, i32(PAGE.DATA)], [2, i32(u)], [3, i32(z)],
      [5, struct([[1, i32(pageRows)], [2, i32(valueEncoding)], [3, i32(ENC.RLE)], [4, i32(ENC.RLE)]])]]);
    uncompressed += sizes.uncompressed;
    compressed += sizes.compressed;
  }

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
 * The table as a Parquet file. `arrowSchema` is the base64 Arrow IPC schema message the footer
 * carries as `ARROW:schema` (as arrow-rs writes it), when the caller has one.
 */
export function toParquet(table: TableData, arrowSchema?: string): Buffer {
  let rows = 0;
  for (const chunk of table.chunks) rows += chunk.rows;
  const file = new FileParts();
  file.push(MAGIC);
  // No rows, no row group (as arrow-rs writes an empty table): the footer's schema alone.
  const rowGroups: TValue[] = [];
  if (rows > 0) {
    const chunks: TValue[] = [];
    let uncompressed = 0;
    // One page buffer for every page of the file (a full page of doubles is 512 KiB).
    const body = new Bytes(Math.min(rows, PAGE_VALUES) * 9 + 1024);
    table.columns.forEach((def, c) => {
      const values = columnValues(def, table, c, rows);
      const column = writeColumn(file, body, def, values, rows);
      releaseBuffers([values.numbers.buffer, values.def.buffer]);
      chunks.push(column.chunk);
      uncompressed += column.uncompressed;
    });
    releaseBuffers([body.buf.buffer]);
    const compressed = file.length - MAGIC.length;
    rowGroups.push(struct([[1, list('struct', chunks)], [2, i64(uncompressed)], [3, i64(rows)], [5, i64(MAGIC.length)], [6, i64(compressed)]]));
  }
  const keyValues = arrowSchema === undefined ? [] : [struct([[1, bin('ARROW:schema')], [2, bin(arrowSchema)]])];
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
  const tail = new Bytes(1024);
  writeStruct(tail, footer);
  tail.int32LE(tail.length);
  tail.bytes(MAGIC);
  file.push(tail.view());

  const out = Buffer.allocUnsafeSlow(file.length);
  let at = 0;
  for (const part of file.parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

