// Day blocks: the history store keeps a series as blocks of bars (schema v2), one row per UTC day
// of 1m bars and per 128 days of 1d bars, each a small columnar blob. A bar per row cost ~1 µs of
// SQLite work per bar written (a cold 60m request for 1000 bars writes 60,000 one-minute bars);
// a block costs one row for 240–390 bars (BENCHMARKS.md, cold requests). Both backends use these
// helpers, so they store byte-identical blocks.
//
// Blob layout (little-endian): u8 format (2 or 3), 3 bytes reserved, u32 n, f64 base timestamp, one
// tag byte per column (timestamp, open, high, low, close, prev_close, volume, amount), u32 CRC-32
// (zlib.crc32 of the 24 bytes before it, then of the columns), then the columns in that order.
// Format 3 is format 2 with a futures contract's two columns after those eight: byte 1 holds the
// tag of open_interest, byte 2 that of settlement_price (ABSENT when the bars have none). A block
// of bars without them is still written as format 2, byte for byte as before.
// Every block read is verified: one whose checksum fails (a page overwritten, bytes changed in the
// database) throws CorruptBlockError, counted in mdqs_cache_corrupt_total{layer="history"}, and
// the request is served from the vendor, never from those bytes. Format 1 (the same without the
// CRC, header 24 bytes) is still read, unverified, until its block is next rewritten.
// A tag says how its column is stored:
//   ABSENT   prev_close and the futures columns only: no bar has one
//   F64      the doubles as they are
//   I32 + k  int32 of value × 10^k, used only where that round trip gives back the very same double
// Timestamps use I32 as seconds after the base (a block spans at most 128 days). A prev_close
// column with some bars lacking it stores those as NaN (F64), and reads without prev_close then.
import { crc32 } from 'node:zlib';
import { countCorrupt } from '../cache/corruption.ts';
import type { BasePeriod, Candles } from '../domain.ts';
import { concatCandles, copyBar, lowerBound, sizedCandles, sliceCandles, upperBound } from '../candles/window.ts';

const DAY_MS = 86_400_000;
const BLOCK_DAYS: Record<BasePeriod, number> = { '1m': 1, '1d': 128 };
const FORMAT = 2;
/** Format 3: format 2 plus the futures columns, their tags in bytes 1 and 2. */
const FORMAT_FUTURES = 3;
/** Format 1: no checksum, columns from byte 24. */
const FORMAT_V1 = 1;
const HEADER_V1 = 24;
/** Format 2: the CRC-32 at byte 24, columns from byte 28. */
const HEADER = 28;

/** A stored block whose checksum does not match its bytes: never decoded into bars. */
export class CorruptBlockError extends Error {
  readonly code = 'MDQS_BLOCK_CORRUPT';
  constructor(message: string) {
    super(message);
    this.name = 'CorruptBlockError';
  }
}
const ABSENT = 0xff;
const F64 = 0;
const I32 = 1;
const I32_MAX = 2 ** 31 - 1;
const BASE_COLUMNS = ['timestamp', 'open', 'high', 'low', 'close', 'prev_close', 'volume', 'amount'] as const;
/** The futures columns, stored after the base ones (format 3). */
const EXTRA_COLUMNS = ['open_interest', 'settlement_price'] as const;
const COLUMNS = [...BASE_COLUMNS, ...EXTRA_COLUMNS] as const;
type Column = (typeof COLUMNS)[number];
/** Scales tried per column, in order: prices in thousandths, volumes and open interest whole, amounts in cents. */
const SCALES: Record<Column, readonly number[]> = {
  timestamp: [], open: [3], high: [3], low: [3], close: [3], prev_close: [3], volume: [0], amount: [2, 0],
  open_interest: [0], settlement_price: [3],
};
/** Columns like prev_close: a bar may lack a value (NaN), the column is returned only when none does. */
const SPARSE: ReadonlySet<Column> = new Set(['prev_close', 'open_interest', 'settlement_price']);

/** Where column j's tag byte is: the eight base columns at 16…23, the futures columns at 1 and 2. */
function tagAt(j: number): number {
  return j < BASE_COLUMNS.length ? 16 + j : 1 + j - BASE_COLUMNS.length;
}

/**
 * A decoded block: prev_close always present, NaN where a bar has none; a futures column present
 * when the block stores it (NaN where a bar has none).
 */
export type BlockBars = Candles & { prev_close: number[] };

export function blockOf(period: BasePeriod, ts: number): number {
  return Math.floor(ts / (BLOCK_DAYS[period] * DAY_MS));
}

/** Index runs [from, to) of `ts` (ascending) that fall in one block each. */
export function blockRuns(period: BasePeriod, ts: readonly number[]): { block: number; from: number; to: number }[] {
  const out: { block: number; from: number; to: number }[] = [];
  let from = 0;
  while (from < ts.length) {
    const block = blockOf(period, ts[from]);
    const to = lowerBound(ts, (block + 1) * BLOCK_DAYS[period] * DAY_MS);
    out.push({ block, from, to });
    from = to;
  }
  return out;
}

/** The smallest exact int32 form of a column (a tag), or F64. */
function tagFor(values: readonly number[], from: number, to: number, scales: readonly number[]): number {
  for (const k of scales) {
    const f = 10 ** k;
    let ok = true;
    for (let i = from; i < to && ok; i++) {
      const x = values[i];
      const q = Math.round(x * f);
      ok = q <= I32_MAX && q >= -I32_MAX && q / f === x;
    }
    if (ok) return I32 + k;
  }
  return F64;
}

/** Bars [from, to) of `c` as one block's blob. */
export function encodeBlock(c: Candles, from = 0, to = c.timestamp.length): Uint8Array {
  const n = to - from;
  const base = n > 0 ? c.timestamp[from] : 0;
  const tags = new Uint8Array(COLUMNS.length);
  tags.fill(ABSENT, BASE_COLUMNS.length);
  let secondsOk = true;
  for (let i = from; i < to && secondsOk; i++) {
    const d = c.timestamp[i] - base;
    secondsOk = d % 1000 === 0 && d / 1000 <= I32_MAX;
  }
  tags[0] = secondsOk ? I32 : F64;
  let bytes = HEADER;
  for (let j = 0; j < COLUMNS.length; j++) {
    const name = COLUMNS[j];
    const col = c[name];
    if (j > 0) {
      // A block decoded without prev_close carries an all-NaN column: stored as absent again.
      if (col === undefined || (SPARSE.has(name) && allNaN(col, from, to))) tags[j] = ABSENT;
      else if (SPARSE.has(name) && hasNaN(col, from, to)) tags[j] = F64;
      else tags[j] = tagFor(col, from, to, SCALES[name]);
    }
    bytes += tags[j] === ABSENT ? 0 : tags[j] === F64 ? 8 * n : 4 * n;
  }
  const futures = tags[BASE_COLUMNS.length] !== ABSENT || tags[BASE_COLUMNS.length + 1] !== ABSENT;
  const out = new Uint8Array(bytes);
  const v = new DataView(out.buffer);
  v.setUint8(0, futures ? FORMAT_FUTURES : FORMAT);
  v.setUint32(4, n, true);
  v.setFloat64(8, base, true);
  out.set(tags.subarray(0, BASE_COLUMNS.length), 16);
  if (futures) out.set(tags.subarray(BASE_COLUMNS.length), 1);
  let at = HEADER;
  for (let j = 0; j < COLUMNS.length; j++) {
    const tag = tags[j];
    if (tag === ABSENT) continue;
    const col = c[COLUMNS[j]] as number[];
    if (tag === F64) {
      for (let i = from; i < to; i++, at += 8) v.setFloat64(at, col[i], true);
    } else if (j === 0) {
      for (let i = from; i < to; i++, at += 4) v.setInt32(at, (col[i] - base) / 1000, true);
    } else {
      const f = 10 ** (tag - I32);
      for (let i = from; i < to; i++, at += 4) v.setInt32(at, Math.round(col[i] * f), true);
    }
  }
  v.setUint32(HEADER_V1, checksum(out), true);
  return out;
}

function checksum(bytes: Uint8Array): number {
  return crc32(bytes.subarray(HEADER), crc32(bytes.subarray(0, HEADER_V1)));
}

function hasNaN(col: readonly number[], from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (Number.isNaN(col[i])) return true;
  return false;
}

function allNaN(col: readonly number[], from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!Number.isNaN(col[i])) return false;
  return true;
}

/** The block's header, verified: its format, its length, and (format 2, unless `sum` is false) its checksum. */
function view(bytes: Uint8Array, sum = true): { v: DataView; n: number; base: number; header: number; columns: number } {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const format = bytes.byteLength < 1 ? undefined : v.getUint8(0);
  const header = format === FORMAT || format === FORMAT_FUTURES ? HEADER : format === FORMAT_V1 ? HEADER_V1 : undefined;
  if (header === undefined) throw new Error(`history store: unknown block format ${format ?? 'empty'}`);
  if (bytes.byteLength < header) return corrupt(`history store: a block of ${bytes.byteLength} bytes is shorter than its ${header}-byte header`, bytes);
  const n = v.getUint32(4, true);
  // Formats 1 and 2 have the base columns only (their bytes 1 and 2 are reserved, not tags).
  const columns = format === FORMAT_FUTURES ? COLUMNS.length : BASE_COLUMNS.length;
  let expected = header;
  for (let j = 0; j < columns; j++) {
    const tag = v.getUint8(tagAt(j));
    expected += tag === ABSENT ? 0 : tag === F64 ? 8 * n : 4 * n;
  }
  if (bytes.byteLength !== expected) return corrupt(`history store: a block of ${n} bars is ${bytes.byteLength} bytes, expected ${expected}`, bytes);
  if (sum && format !== FORMAT_V1 && v.getUint32(HEADER_V1, true) !== checksum(bytes)) {
    return corrupt(`history store: a block's checksum does not match its ${bytes.byteLength} bytes (corrupted in the database)`, bytes);
  }
  return { v, n, base: v.getFloat64(8, true), header, columns };
}

/** Column j's tag in a verified block: ABSENT for a futures column of a format-2 block. */
function tagOf(v: DataView, columns: number, j: number): number {
  return j < columns ? v.getUint8(tagAt(j)) : ABSENT;
}

function corrupt(message: string, bytes: Uint8Array): never {
  // Logged where the store's error is handled (store/candle-store.ts: served from the vendor).
  countCorrupt('history', undefined, { bytes: bytes.byteLength });
  throw new CorruptBlockError(message);
}

function readColumn(v: DataView, tag: number, n: number, at: number, out: number[], base: number, seconds: boolean): number {
  if (tag === F64) {
    for (let i = 0; i < n; i++, at += 8) out[i] = v.getFloat64(at, true);
  } else if (seconds) {
    for (let i = 0; i < n; i++, at += 4) out[i] = base + v.getInt32(at, true) * 1000;
  } else {
    const f = 10 ** (tag - I32);
    if (f === 1) for (let i = 0; i < n; i++, at += 4) out[i] = v.getInt32(at, true);
    else for (let i = 0; i < n; i++, at += 4) out[i] = v.getInt32(at, true) / f;
  }
  return at;
}

export function decodeBlock(bytes: Uint8Array): BlockBars {
  const { v, n, base, header, columns } = view(bytes);
  const c = sizedCandles(n, true) as BlockBars;
  let at = header;
  for (let j = 0; j < columns; j++) {
    const tag = v.getUint8(tagAt(j));
    const name = COLUMNS[j];
    if (j >= BASE_COLUMNS.length) {
      if (tag === ABSENT) continue;
      c[name] = new Array<number>(n);
    }
    const col = c[name] as number[];
    if (tag === ABSENT) col.fill(Number.NaN);
    else at = readColumn(v, tag, n, at, col, base, j === 0 && tag === I32);
  }
  return c;
}

/** Only the labels of a block (counting bars in a range). */
export function decodeTimestamps(bytes: Uint8Array): number[] {
  const { v, n, base, header } = view(bytes);
  const tag = v.getUint8(16);
  const out = new Array<number>(n);
  readColumn(v, tag, n, header, out, base, tag === I32);
  return out;
}

function withPrev(c: Candles): BlockBars {
  if (c.prev_close !== undefined) return c as BlockBars;
  return { ...c, prev_close: new Array<number>(c.timestamp.length).fill(Number.NaN) };
}

/** `incoming` over `existing` (both ascending): a label in both takes the incoming bar. */
export function mergeBlock(existing: BlockBars | undefined, incoming: Candles): Candles {
  if (existing === undefined || existing.timestamp.length === 0) return incoming;
  const a = existing;
  const b = withPrev(incoming);
  const out = sizedCandles(a.timestamp.length + b.timestamp.length, true) as BlockBars;
  // A futures column either side has is kept, NaN for the bars of the side without it.
  const extras = EXTRA_COLUMNS.filter((name) => a[name] !== undefined || b[name] !== undefined);
  for (const name of extras) out[name] = new Array<number>(out.timestamp.length);
  let i = 0;
  let j = 0;
  let k = 0;
  const take = (src: BlockBars, x: number) => {
    copyBar(out, k, src, x);
    out.prev_close[k] = src.prev_close[x];
    for (const name of extras) (out[name] as number[])[k] = src[name]?.[x] ?? Number.NaN;
    k += 1;
  };
  while (i < a.timestamp.length || j < b.timestamp.length) {
    if (j >= b.timestamp.length || (i < a.timestamp.length && a.timestamp[i] < b.timestamp[j])) take(a, i++);
    else {
      if (i < a.timestamp.length && a.timestamp[i] === b.timestamp[j]) i++;
      take(b, j++);
    }
  }
  for (const name of BASE_COLUMNS) out[name].length = k;
  for (const name of extras) (out[name] as number[]).length = k;
  return out;
}

/** The block without the bars labelled in [from, to], and how many went. */
export function cutBlock(block: BlockBars, from: number, to: number): { kept: Candles; removed: number } {
  const lo = lowerBound(block.timestamp, from);
  const hi = upperBound(block.timestamp, to);
  if (hi <= lo) return { kept: block, removed: 0 };
  const head = sliceCandles(block, 0, lo);
  const tail = sliceCandles(block, hi, block.timestamp.length);
  return { kept: head.timestamp.length === 0 ? tail : tail.timestamp.length === 0 ? head : concatCandles(head, tail), removed: hi - lo };
}

/**
 * Decoded blocks (ascending, not overlapping) → the bars in [lo, hi], the newest `newest` of them
 * when given; prev_close only when every returned bar has one. One copy, whatever the block count.
 */
export function assemble(blocks: readonly BlockBars[], lo: number, hi: number, newest?: number): Candles {
  const runs = blocks.map((b) => ({ b, from: lowerBound(b.timestamp, lo), to: upperBound(b.timestamp, hi) }));
  let total = 0;
  for (const r of runs) total += Math.max(0, r.to - r.from);
  let skip = newest === undefined ? 0 : Math.max(0, total - Math.max(0, Math.floor(newest)));
  const out = sizedCandles(total - skip, true) as BlockBars;
  const extras = runs.some((r) => r.b.open_interest !== undefined || r.b.settlement_price !== undefined)
    ? EXTRA_COLUMNS.filter((name) => runs.some((r) => r.to > r.from && r.b[name] !== undefined))
    : NO_EXTRAS;
  for (const name of extras) out[name] = new Array<number>(out.timestamp.length);
  let k = 0;
  let allPrev = true;
  for (const r of runs) {
    let from = r.from;
    if (skip > 0) {
      const drop = Math.min(skip, Math.max(0, r.to - from));
      from += drop;
      skip -= drop;
    }
    const prev = r.b.prev_close;
    const k0 = k;
    for (let i = from; i < r.to; i++, k++) {
      copyBar(out, k, r.b, i);
      const p = prev[i];
      out.prev_close[k] = p;
      if (p !== p) allPrev = false;
    }
    for (const name of extras) {
      const src = r.b[name];
      const col = out[name] as number[];
      for (let i = from, x = k0; i < r.to; i++, x++) col[x] = src === undefined ? Number.NaN : src[i];
    }
  }
  return withoutSparseGaps(out, allPrev, extras);
}

/** `out` without each sparse column in which some bar has no value (NaN). */
function withoutSparseGaps(out: BlockBars, allPrev: boolean, extras: readonly (typeof EXTRA_COLUMNS)[number][]): Candles {
  // Without futures columns (every equity read): the object rebuilt without prev_close by
  // destructuring, never `delete` (which leaves it in V8's slow dictionary mode).
  if (extras.length === 0) {
    if (allPrev) return out;
    const { prev_close: _drop, ...rest } = out;
    return rest;
  }
  const n = out.timestamp.length;
  const { prev_close, open_interest, settlement_price, ...base } = out;
  const rest: Candles = base;
  if (allPrev) rest.prev_close = prev_close;
  if (open_interest !== undefined && !hasNaN(open_interest, 0, n)) rest.open_interest = open_interest;
  if (settlement_price !== undefined && !hasNaN(settlement_price, 0, n)) rest.settlement_price = settlement_price;
  return rest;
}

/** No futures columns: what an equity's blocks give. */
const NO_EXTRAS: readonly (typeof EXTRA_COLUMNS)[number][] = [];

/** Label of bar `i` of a verified block (timestamps are its first column). */
function labelAt(v: DataView, tag: number, header: number, base: number, i: number): number {
  return tag === F64 ? v.getFloat64(header + 8 * i, true) : base + v.getInt32(header + 4 * i, true) * 1000;
}

/** Values [from, from + m) of one stored column into out[k…], as readColumn converts them. */
function readRange(v: DataView, tag: number, at: number, m: number, out: number[], k: number, base: number, seconds: boolean): void {
  const end = k + m;
  if (tag === F64) {
    for (let i = k; i < end; i++, at += 8) out[i] = v.getFloat64(at, true);
  } else if (seconds) {
    for (let i = k; i < end; i++, at += 4) out[i] = base + v.getInt32(at, true) * 1000;
  } else {
    const f = 10 ** (tag - I32);
    if (f === 1) for (let i = k; i < end; i++, at += 4) out[i] = v.getInt32(at, true);
    else for (let i = k; i < end; i++, at += 4) out[i] = v.getInt32(at, true) / f;
  }
}

/**
 * Stored blocks (ascending, not overlapping) straight to the bars labelled in [lo, hi], the newest
 * `newest` of them when given: assemble(blobs.map(decodeBlock), lo, hi, newest) without decoding
 * a block whole first. Every block is verified whole (its checksum) before a value is read, unless
 * `verified` says this very memory was (the tier's block cache holds only blocks read this way);
 * only the bars returned are converted, each column written once into the output. `held`: the
 * bars in [lo, hi] before `newest` cut them.
 */
export function readBlocks(blobs: readonly Uint8Array[], lo: number, hi: number, newest?: number, verified = false): { bars: Candles; held: number } {
  const parts: { v: DataView; n: number; base: number; header: number; columns: number; from: number; to: number }[] = [];
  let total = 0;
  for (const bytes of blobs) {
    const { v, n, base, header, columns } = view(bytes, !verified);
    const tag = v.getUint8(16);
    let a = 0;
    let b = n;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (labelAt(v, tag, header, base, mid) < lo) a = mid + 1;
      else b = mid;
    }
    const from = a;
    b = n;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (labelAt(v, tag, header, base, mid) <= hi) a = mid + 1;
      else b = mid;
    }
    if (a > from) {
      parts.push({ v, n, base, header, columns, from, to: a });
      total += a - from;
    }
  }
  let skip = newest === undefined ? 0 : Math.max(0, total - Math.max(0, Math.floor(newest)));
  const out = sizedCandles(total - skip, true) as BlockBars;
  const extras = parts.some((p) => p.columns > BASE_COLUMNS.length)
    ? EXTRA_COLUMNS.filter((_, e) => parts.some((p) => tagOf(p.v, p.columns, BASE_COLUMNS.length + e) !== ABSENT))
    : NO_EXTRAS;
  for (const name of extras) out[name] = new Array<number>(out.timestamp.length);
  const columns = extras.length === 0 ? BASE_COLUMNS.length : COLUMNS.length;
  let k = 0;
  let allPrev = true;
  for (const p of parts) {
    let from = p.from;
    if (skip > 0) {
      const drop = Math.min(skip, p.to - from);
      from += drop;
      skip -= drop;
    }
    const m = p.to - from;
    if (m <= 0) continue;
    let at = p.header;
    for (let j = 0; j < columns; j++) {
      const tag = tagOf(p.v, p.columns, j);
      const col = out[COLUMNS[j]];
      if (col === undefined) continue;
      if (tag === ABSENT) {
        col.fill(Number.NaN, k, k + m);
        if (j === 5) allPrev = false;
        continue;
      }
      const width = tag === F64 ? 8 : 4;
      readRange(p.v, tag, at + width * from, m, col, k, p.base, j === 0 && tag === I32);
      at += width * p.n;
    }
    if (allPrev) for (let i = k; i < k + m; i++) if (out.prev_close[i] !== out.prev_close[i]) allPrev = false;
    k += m;
  }
  return { bars: withoutSparseGaps(out, allPrev, extras), held: total };
}

/** Bars of a block labelled in [lo, hi]. */
export function countIn(timestamps: readonly number[], lo: number, hi: number): number {
  return Math.max(0, upperBound(timestamps, hi) - lowerBound(timestamps, lo));
}
