// Candles as the memory tier keeps them (issue 15 item 4): every column in ONE ArrayBuffer, so an
// entry's bytes are its buffer's byteLength plus a fixed, measured overhead, and the byte bound
// is exact. `number[]` columns cost 8–24 bytes a number on the V8 heap depending on whether V8
// boxed them; here a price costs 8 bytes, a timestamp or volume usually 4, off the V8 heap.
//
//   packCandles(candles): ArrayBuffer | undefined     undefined: not plain numeric columns, keep as is
//   unpackCandles(buffer): Candles                     fresh number[] columns (the caller may keep them)
//   packedCandleBytes(candles): number | undefined     byteLength packCandles would allocate
//   packedCandleBound(candles): number                 an upper bound of it, without reading values
//
// Layout, Float64 slots first: [n, k, then per column: code, kind, base, unit], then the
// float64 columns (8n bytes each), then the int32 columns (4n bytes each), in key order.
//   kind 0: Float64Array, the doubles bit for bit (NaN, ±Infinity and -0 included).
//   kind 1: Int32Array of (v − base) / unit; chosen only when every v is a safe integer (not -0)
//           and that quotient is an exact int32 — so v = base + q × unit holds exactly (all terms
//           are integers below 2^53). Units tried: a minute, a second, 1 (timestamps of minute and
//           daily bars fit in minutes; volumes in units).
// The original key order is kept (it is the order JSON.stringify writes).
import type { Candles } from '../domain.ts';

const CANDLE_COLUMNS = ['timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prev_close', 'open_interest', 'settlement_price'] as const;
type Column = (typeof CANDLE_COLUMNS)[number];
const CODE = new Map<string, number>(CANDLE_COLUMNS.map((name, i) => [name, i]));
/** Integer form is tried for these; prices and amounts are always float64. */
const INTEGER_COLUMNS = new Set<string>(['timestamp', 'volume', 'open_interest']);
const UNITS = [60_000, 1_000, 1] as const;
const REQUIRED = 7;
const F64 = 0;
const I32 = 1;
const SLOTS_PER_COLUMN = 4;

interface Plan {
  names: string[];
  kinds: number[];
  bases: number[];
  units: number[];
  n: number;
  bytes: number;
}

function isNegativeZero(v: number): boolean {
  return v === 0 && 1 / v < 0;
}

/** Every (v − base) / unit an exact int32, every v a safe integer other than -0? */
function fitsUnit(values: readonly number[], base: number, unit: number): boolean {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const q = (v - base) / unit;
    if (!Number.isSafeInteger(v) || (v === 0 && 1 / v < 0) || q !== Math.trunc(q) || q > 2_147_483_647 || q < -2_147_483_648) return false;
  }
  return true;
}

/** The int32 form of `values` as [base, unit], or undefined when it would not be exact. */
function integerForm(values: readonly number[]): [number, number] | undefined {
  if (values.length === 0) return [0, 1];
  const base = values[0];
  if (!Number.isSafeInteger(base) || isNegativeZero(base)) return undefined;
  // Coarsest unit first; a unit that does not fit usually fails on the first values.
  for (const unit of UNITS) if (fitsUnit(values, base, unit)) return [base, unit];
  return undefined;
}

function plan(candles: Candles): Plan | undefined {
  if (typeof candles !== 'object' || candles === null || Array.isArray(candles)) return undefined;
  const names = Object.keys(candles);
  if (names.length < REQUIRED || names.length > CANDLE_COLUMNS.length) return undefined;
  const record = candles as unknown as Record<string, unknown>;
  const first = record.timestamp;
  if (!Array.isArray(first)) return undefined;
  const n = first.length;
  const kinds: number[] = [];
  const bases: number[] = [];
  const units: number[] = [];
  let seen = 0;
  let bytes = 8 * (2 + SLOTS_PER_COLUMN * names.length);
  for (const name of names) {
    const code = CODE.get(name);
    if (code === undefined) return undefined;
    if (code < REQUIRED) seen += 1;
    const column = record[name];
    if (!Array.isArray(column) || column.length !== n) return undefined;
    for (let i = 0; i < n; i++) if (typeof column[i] !== 'number') return undefined;
    const form = INTEGER_COLUMNS.has(name) ? integerForm(column as number[]) : undefined;
    kinds.push(form === undefined ? F64 : I32);
    bases.push(form?.[0] ?? 0);
    units.push(form?.[1] ?? 1);
    bytes += form === undefined ? 8 * n : 4 * n;
  }
  // Int32 columns follow all the float64 ones, so every float64 column stays 8-aligned.
  return seen === REQUIRED ? { names, kinds, bases, units, n, bytes } : undefined;
}

/** Bytes of the buffer packCandles would allocate; undefined when it would not pack. */
export function packedCandleBytes(candles: Candles): number | undefined {
  return plan(candles)?.bytes;
}

/** All columns float64: what a packed entry costs at most, from the column count and length alone. */
export function packedCandleBound(candles: Candles): number {
  const k = Object.keys(candles).length;
  return 8 * (2 + SLOTS_PER_COLUMN * k + k * candles.timestamp.length);
}

export function packCandles(candles: Candles): ArrayBuffer | undefined {
  const p = plan(candles);
  if (p === undefined) return undefined;
  const { names, kinds, bases, units, n } = p;
  const k = names.length;
  const buffer = new ArrayBuffer(p.bytes);
  const header = new Float64Array(buffer, 0, 2 + SLOTS_PER_COLUMN * k);
  header[0] = n;
  header[1] = k;
  const record = candles as unknown as Record<Column, number[]>;
  let offset = header.byteLength;
  for (const pass of [F64, I32]) {
    for (let c = 0; c < k; c++) {
      const at = 2 + SLOTS_PER_COLUMN * c;
      header[at] = CODE.get(names[c]) as number;
      header[at + 1] = kinds[c];
      header[at + 2] = bases[c];
      header[at + 3] = units[c];
      if (kinds[c] !== pass) continue;
      const values = record[names[c] as Column];
      if (pass === F64) {
        const out = new Float64Array(buffer, offset, n);
        for (let i = 0; i < n; i++) out[i] = values[i];
        offset += 8 * n;
      } else {
        const out = new Int32Array(buffer, offset, n);
        const base = bases[c];
        const unit = units[c];
        for (let i = 0; i < n; i++) out[i] = (values[i] - base) / unit;
        offset += 4 * n;
      }
    }
  }
  return buffer;
}

export function unpackCandles(buffer: ArrayBuffer): Candles {
  const view = new Float64Array(buffer, 0, 2);
  const n = view[0];
  const k = view[1];
  const header = new Float64Array(buffer, 0, 2 + SLOTS_PER_COLUMN * k);
  const out: Record<string, number[]> = {};
  // Keys are created in the stored order first (JSON key order), then filled.
  for (let c = 0; c < k; c++) out[CANDLE_COLUMNS[header[2 + SLOTS_PER_COLUMN * c]]] = [];
  let offset = header.byteLength;
  for (const pass of [F64, I32]) {
    for (let c = 0; c < k; c++) {
      const at = 2 + SLOTS_PER_COLUMN * c;
      if (header[at + 1] !== pass) continue;
      const name = CANDLE_COLUMNS[header[at]];
      const column = new Array<number>(n);
      if (pass === F64) {
        const values = new Float64Array(buffer, offset, n);
        for (let i = 0; i < n; i++) column[i] = values[i];
        offset += 8 * n;
      } else {
        const values = new Int32Array(buffer, offset, n);
        const base = header[at + 2];
        const unit = header[at + 3];
        for (let i = 0; i < n; i++) column[i] = base + values[i] * unit;
        offset += 4 * n;
      }
      out[name] = column;
    }
  }
  return out as unknown as Candles;
}
