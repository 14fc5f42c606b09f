// Boundary validation of vendor payloads, shared by the real-vendor adapters. A payload that is
// not what the parser expects becomes AppError UPSTREAM_BAD_RESPONSE here, never a TypeError or a
// NaN deeper in. Vendor text never goes into a message (docs/contract.md#errors: no upstream messages on
// 5xx); `details` carries only the adapter id and the path that failed.

import { AppError } from '../../src/errors.ts';
import type { Candles, ExFactor, Instrument, Quote } from '../../src/domain.ts';
import type { BySymbol, InvalidRowsEvent, Resource } from '../types.ts';
import type { Bar } from './bars.ts';

export type JsonRecord = Record<string, unknown>;

export interface PayloadReader {
  readonly vendor: string;
  fail(path: string): never;
  json(text: string, path: string): unknown;
  record(value: unknown, path: string): JsonRecord;
  array(value: unknown, path: string): unknown[];
  /** A finite JSON number (a numeric string is a wrong type). */
  number(value: unknown, path: string): number;
  /**
   * A JSON number of any magnitude: a vendor field whose literal overflows (1e999) parses to
   * ±Infinity and is a bad ROW for the row checks to drop, not a broken payload. Wrong types fail.
   */
  value(value: unknown, path: string): number;
  /** null, undefined, '' and '-' → null; else as `value`. */
  optionalValue(value: unknown, path: string): number | null;
  /** null, undefined, '' and '-' (Eastmoney's "no value") → null; anything else must be a finite number. */
  optionalNumber(value: unknown, path: string): number | null;
  /**
   * A cell of a delimited text row (Eastmoney klines): '-' or '' → null; 'NaN' / 'Infinity' /
   * 'inf' → that non-finite value (a bad row for the row checks); else a finite decimal.
   */
  cell(value: string, path: string): number | null;
  string(value: unknown, path: string): string;
  optionalString(value: unknown, path: string): string | null;
}

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function badResponse(vendor: string, path: string, cause?: unknown): AppError {
  return new AppError('UPSTREAM_BAD_RESPONSE', 'The upstream data source sent an unexpected response', {
    details: { adapter: vendor, path },
    cause,
  });
}


const NON_FINITE = /^[+-]?(nan|inf|infinity)$/i;

export function payloadReader(vendor: string): PayloadReader {
  const fail = (path: string): never => {
    throw badResponse(vendor, path);
  };
  return {
    vendor,
    fail,
    json(text, path) {
      try {
        return JSON.parse(text) as unknown;
      } catch (cause) {
        throw badResponse(vendor, path, cause);
      }
    },
    record(value, path) {
      return isRecord(value) ? value : fail(path);
    },
    array(value, path) {
      return Array.isArray(value) ? value : fail(path);
    },
    number(value, path) {
      return typeof value === 'number' && Number.isFinite(value) ? value : fail(path);
    },
    optionalNumber(value, path) {
      if (value === null || value === undefined || value === '' || value === '-') return null;
      return typeof value === 'number' && Number.isFinite(value) ? value : fail(path);
    },
    value(value, path) {
      return typeof value === 'number' ? value : fail(path);
    },
    optionalValue(value, path) {
      if (value === null || value === undefined || value === '' || value === '-') return null;
      return typeof value === 'number' ? value : fail(path);
    },
    cell(value, path) {
      const text = value.trim();
      if (text === '' || text === '-') return null;
      if (NON_FINITE.test(text)) return Number(text.replace(/^([+-]?)inf$/i, '$1Infinity').replace(/^[+-]?nan$/i, 'NaN').replace(/infinity/i, 'Infinity'));
      const n = Number(text);
      return Number.isFinite(n) ? n : fail(path);
    },
    string(value, path) {
      return typeof value === 'string' ? value : fail(path);
    },
    optionalString(value, path) {
      if (value === null || value === undefined) return null;
      return typeof value === 'string' ? value : fail(path);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Row checks (docs/contract.md#shapes-and-units invariants, issue 14.4). A row that breaks an invariant is dropped and
// reported (the service logs it and counts it); when the vendor sent rows and none is usable the
// answer is UPSTREAM_BAD_RESPONSE, so an invalid row is never served and a garbage answer is
// never passed off as "no data".

/** Where one payload's dropped rows are reported: one event per reason. */
export interface RowCheck {
  readonly adapter: string;
  readonly resource: Resource;
  readonly symbol?: string;
  drop(reason: string, rows?: number): void;
  /** Reports the tallied drops (once per reason). */
  flush(): void;
  /** Flushes, then throws UPSTREAM_BAD_RESPONSE: the vendor sent rows and none is usable. */
  nothingUsable(): never;
}

export type InvalidRowsSink = ((event: InvalidRowsEvent) => void) | undefined;

export function rowCheck(adapter: string, sink: InvalidRowsSink, resource: Resource, symbol?: string): RowCheck {
  const tally = new Map<string, number>();
  const check: RowCheck = {
    adapter,
    resource,
    symbol,
    drop(reason, rows = 1) {
      tally.set(reason, (tally.get(reason) ?? 0) + rows);
    },
    flush() {
      for (const [reason, dropped] of tally) {
        const event: InvalidRowsEvent = { adapter, resource, dropped, reason };
        if (symbol !== undefined) event.symbol = symbol;
        sink?.(event);
      }
      tally.clear();
    },
    nothingUsable() {
      check.flush();
      throw badResponse(adapter, symbol === undefined ? resource : `${resource}:${symbol}`);
    },
  };
  return check;
}

/**
 * How far a vendor's independently rounded open/close may sit outside its high/low before the
 * row is judged broken rather than rounded: 1% covers one tick on a 1.00 share; tidyBar (bars.ts)
 * then widens the envelope exactly.
 */
const ENVELOPE_SLACK = 0.01;

function priceProblem(values: readonly number[]): string | undefined {
  for (const v of values) if (!Number.isFinite(v)) return 'non_finite';
  for (const v of values) if (v <= 0) return 'non_positive_price';
  return undefined;
}

function sizeProblem(volume: number, amount: number): string | undefined {
  if (!Number.isFinite(volume) || !Number.isFinite(amount)) return 'non_finite';
  if (volume < 0) return 'negative_volume';
  if (amount < 0) return 'negative_amount';
  return undefined;
}

/** low ≤ open, close ≤ high, within ENVELOPE_SLACK. */
export function envelopeOk(open: number, high: number, low: number, close: number): boolean {
  const lo = low * (1 - ENVELOPE_SLACK);
  const hi = high * (1 + ENVELOPE_SLACK);
  return lo <= hi && open >= lo && open <= hi && close >= lo && close <= hi;
}

function barProblem(b: Bar): string | undefined {
  if (!Number.isFinite(b.t)) return 'non_finite';
  const prices = b.prevClose === undefined ? [b.open, b.high, b.low, b.close] : [b.open, b.high, b.low, b.close, b.prevClose];
  return priceProblem(prices) ?? sizeProblem(b.volume, b.amount) ?? (envelopeOk(b.open, b.high, b.low, b.close) ? undefined : 'ohlc_envelope');
}

/**
 * Vendor rows (as stamped by the vendor) → the valid ones, ascending by stamp, one per stamp.
 * Unsorted rows are sorted (nothing lost; reported with `dropped: 0`); rows repeating a stamp
 * keep the later copy in the vendor's order (the live bar). An empty input is an empty result;
 * rows sent and none valid is UPSTREAM_BAD_RESPONSE.
 */
export function checkBars(rows: readonly Bar[], check: RowCheck): Bar[] {
  const valid: Bar[] = [];
  for (const row of rows) {
    const problem = barProblem(row);
    if (problem === undefined) valid.push(row);
    else check.drop(problem);
  }
  if (rows.length > 0 && valid.length === 0) check.nothingUsable();
  let sorted = true;
  for (let i = 1; i < valid.length && sorted; i++) if (valid[i].t < valid[i - 1].t) sorted = false;
  if (!sorted) check.drop('unsorted_timestamps', 0);
  const byStamp = new Map<number, Bar>();
  for (const row of valid) byStamp.set(row.t, row);
  if (byStamp.size < valid.length) check.drop('duplicate_timestamp', valid.length - byStamp.size);
  const out = sorted && byStamp.size === valid.length ? valid : [...byStamp.values()].sort((a, b) => a.t - b.t);
  check.flush();
  return out;
}

/**
 * Columnar candles (an adapter that builds them itself, like sim) through the same checks as
 * checkBars. The common case, every row valid and ascending, returns `c` untouched.
 */
export function checkCandles(c: Candles, check: RowCheck): Candles {
  const n = c.timestamp.length;
  const columns = [c.open, c.high, c.low, c.close, c.volume, c.amount, ...(c.prev_close ? [c.prev_close] : [])];
  if (columns.some((col) => col.length !== n)) unequalColumns(check, Math.max(n, ...columns.map((col) => col.length)));
  const bar = (i: number): Bar => {
    const b: Bar = { t: c.timestamp[i], open: c.open[i], high: c.high[i], low: c.low[i], close: c.close[i], volume: c.volume[i], amount: c.amount[i] };
    if (c.prev_close) b.prevClose = c.prev_close[i];
    return b;
  };
  // Allocation-free scan: the sim serves large windows on the hot path.
  const lo = 1 - ENVELOPE_SLACK;
  const hi = 1 + ENVELOPE_SLACK;
  let clean = true;
  for (let i = 0; i < n && clean; i++) {
    const o = c.open[i], h = c.high[i], l = c.low[i], cl = c.close[i], v = c.volume[i], a = c.amount[i];
    const p = c.prev_close === undefined ? 1 : c.prev_close[i];
    // Every comparison is false for NaN, so a non-finite value fails one of these too.
    clean = o > 0 && h > 0 && l > 0 && cl > 0 && p > 0 && v >= 0 && a >= 0
      && h < Infinity && o < Infinity && cl < Infinity && p < Infinity && v < Infinity && a < Infinity
      && l * lo <= h * hi && o >= l * lo && o <= h * hi && cl >= l * lo && cl <= h * hi
      && Number.isFinite(c.timestamp[i]) && (i === 0 || c.timestamp[i] > c.timestamp[i - 1]);
  }
  if (clean) return c;
  const bars = checkBars(Array.from({ length: n }, (_, i) => bar(i)), check);
  const out: Candles = {
    timestamp: bars.map((b) => b.t), open: bars.map((b) => b.open), high: bars.map((b) => b.high), low: bars.map((b) => b.low),
    close: bars.map((b) => b.close), volume: bars.map((b) => b.volume), amount: bars.map((b) => b.amount),
  };
  if (c.prev_close) out.prev_close = bars.map((b) => b.prevClose as number);
  return out;
}

/** Columns of unequal length cannot be lined up: every row is dropped and the payload refused. */
export function unequalColumns(check: RowCheck, rows: number): never {
  check.drop('unequal_columns', rows);
  return check.nothingUsable();
}

export function quoteProblem(q: Quote): string | undefined {
  if (!Number.isFinite(q.timestamp)) return 'non_finite';
  const problem = priceProblem([q.last_price, q.open, q.high, q.low, q.prev_close]) ?? sizeProblem(q.volume, q.amount);
  if (problem !== undefined) return problem;
  // Before the first trade a quote can stand at the previous close with a day range of nothing.
  if (q.low > q.high * (1 + ENVELOPE_SLACK)) return 'ohlc_envelope';
  if (q.volume > 0 && !envelopeOk(q.open, q.high, q.low, q.last_price)) return 'ohlc_envelope';
  return undefined;
}

/**
 * Quotes as the vendor listed them (possibly repeating a symbol) → one valid quote per symbol,
 * the newest by timestamp (a tie keeps the later row). Pass only quotes of symbols we asked
 * about: when there are some and none is valid, UPSTREAM_BAD_RESPONSE.
 */
export function checkQuotes(quotes: readonly Quote[], check: RowCheck): BySymbol<Quote> {
  const out: BySymbol<Quote> = new Map<string, Quote>();
  const dropped = new Set<string>();
  for (const q of quotes) {
    const problem = quoteProblem(q);
    if (problem !== undefined) {
      check.drop(problem);
      dropped.add(q.symbol);
      continue;
    }
    const seen = out.get(q.symbol);
    if (seen !== undefined) {
      check.drop('duplicate_symbol');
      if (seen.timestamp > q.timestamp) continue;
      out.delete(q.symbol);
    }
    out.set(q.symbol, q);
  }
  if (quotes.length > 0 && out.size === 0) check.nothingUsable();
  check.flush();
  for (const symbol of dropped) if (!out.has(symbol)) reject(out, symbol);
  return out;
}

/** The vendor answered for `symbol`, but with nothing usable: a failure, not an unknown symbol. */
export function reject<T>(out: BySymbol<T>, symbol: string): void {
  const rejected = new Set(out.rejected ?? []);
  rejected.add(symbol);
  out.rejected = rejected;
}

/**
 * One symbol's ex-factor events → ascending, one per date. An exact repeat is applied once; two
 * different factors on one date, or any factor that is not a finite positive number, leave the
 * whole list unusable (a partial list would silently mis-adjust every earlier price): undefined.
 */
export function checkExFactorList(events: readonly ExFactor[], check: RowCheck): ExFactor[] | undefined {
  const byDate = new Map<number, ExFactor>();
  let repeats = 0;
  for (const e of events) {
    if (!Number.isFinite(e.timestamp) || !Number.isFinite(e.ex_factor) || e.ex_factor <= 0) {
      check.drop('invalid_ex_factor', events.length);
      return undefined;
    }
    const seen = byDate.get(e.timestamp);
    if (seen !== undefined && seen.ex_factor !== e.ex_factor) {
      check.drop('conflicting_ex_factor', events.length);
      return undefined;
    }
    if (seen !== undefined) repeats++;
    byDate.set(e.timestamp, e);
  }
  if (repeats > 0) check.drop('duplicate_ex_factor', repeats);
  return [...byDate.values()].sort((a, b) => a.timestamp - b.timestamp);
}

export function instrumentProblem(i: Instrument): string | undefined {
  if (!Number.isFinite(i.ext.tick_size) || i.ext.tick_size <= 0) return 'non_positive_tick_size';
  if (i.ext.lot_size !== undefined && !(Number.isFinite(i.ext.lot_size) && i.ext.lot_size > 0)) return 'non_positive_lot_size';
  return undefined;
}

/**
 * Batch results whose per-symbol items passed (or failed) their checks: `sent` items for
 * symbols we asked about, `kept` of them usable. Reports, and refuses an answer left empty.
 */
export function settleBatch(check: RowCheck, sent: number, kept: number): void {
  if (sent > 0 && kept === 0) check.nothingUsable();
  check.flush();
}

/** Runs `work` over `items` with at most `limit` in flight; results keep input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    // After one failure the whole call fails, so the other lanes stop taking new items.
    while (next < items.length && !failed) {
      const i = next++;
      try {
        out[i] = await work(items[i]);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  });
  await Promise.all(lanes);
  return out;
}
