// Small pieces of the canonical shapes that every real-vendor parser needs: ext types per
// region, enum checks, ratio helpers, depth levels.

import type { RowCheck } from './validate.ts';
import type { Depth, ExtType, InstrumentType, QuoteExt, Region, Session, SymbolRef } from '../../src/domain.ts';

export const EXT_TYPE: Record<Region, ExtType> = { CN: 'cn_equity', HK: 'hk_equity', US: 'us_equity' };

const SESSIONS: ReadonlySet<string> = new Set<Session>([
  'pre_market', 'regular', 'lunch_break', 'after_hours', 'closed', 'halted',
]);
const INSTRUMENT_TYPES: ReadonlySet<string> = new Set<InstrumentType>([
  'stock', 'etf', 'index', 'bond', 'fund', 'futures', 'options', 'other',
]);

export function asSession(value: unknown): Session | undefined {
  return typeof value === 'string' && SESSIONS.has(value) ? (value as Session) : undefined;
}

export function asInstrumentType(value: unknown): InstrumentType | undefined {
  return typeof value === 'string' && INSTRUMENT_TYPES.has(value) ? (value as InstrumentType) : undefined;
}

/** Ratio fields derived from prices when a vendor leaves them out (fractions, docs/contract.md#shapes-and-units). */
export function derivedExt(
  ref: SymbolRef, name: string, p: { last: number; prevClose: number; high: number; low: number },
): QuoteExt {
  const change = p.last - p.prevClose;
  return {
    type: EXT_TYPE[ref.region],
    name,
    amplitude: p.prevClose > 0 ? round((p.high - p.low) / p.prevClose) : 0,
    change_amount: round(change),
    change_pct: p.prevClose > 0 ? round(change / p.prevClose) : 0,
    turnover_rate: null,
  };
}

export interface DepthLevel {
  price: number | null;
  volume: number | null;
}

/**
 * Canonical depth from vendor levels: empty levels (no price or no volume) are omitted rather
 * than zero-padded, bids sorted descending and asks ascending, at most five per side
 * (docs/contract.md#shapes-and-units). Volumes are already in shares.
 */
function buildDepth(ref: SymbolRef, timestamp: number, bids: DepthLevel[], asks: DepthLevel[]): Depth {
  const clean = (levels: DepthLevel[], dir: 1 | -1) =>
    levels
      .filter((l): l is { price: number; volume: number } => l.price !== null && l.price > 0 && l.volume !== null && l.volume > 0)
      .sort((a, b) => dir * (a.price - b.price))
      .slice(0, 5);
  const b = clean(bids, -1);
  const a = clean(asks, 1);
  return {
    symbol: ref.symbol,
    region: ref.region,
    timestamp,
    bid_prices: b.map((l) => l.price),
    bid_volumes: b.map((l) => Math.round(l.volume)),
    ask_prices: a.map((l) => l.price),
    ask_volumes: a.map((l) => Math.round(l.volume)),
  };
}

/** Rounds away binary noise from unit conversions (e.g. 0.43 / 100). */
export function round(value: number, digits = 10): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/**
 * Depth with its levels checked: a level with a negative or non-finite price or volume is dropped
 * and reported (a zero or missing price or volume is an empty level, omitted silently as above).
 * A book whose every non-empty level was invalid is undefined: the vendor sent nothing usable.
 */
export function checkedDepth(
  ref: SymbolRef, timestamp: number, bids: DepthLevel[], asks: DepthLevel[], check: RowCheck,
): Depth | undefined {
  let invalid = 0;
  const keep = (levels: DepthLevel[]) => levels.filter((l) => {
    const problem = levelProblem(l);
    if (problem !== undefined) {
      check.drop(problem);
      invalid++;
    }
    return problem === undefined;
  });
  if (!Number.isFinite(timestamp)) {
    check.drop('non_finite', bids.length + asks.length);
    return undefined;
  }
  const depth = buildDepth(ref, timestamp, keep(bids), keep(asks));
  const levels = depth.bid_prices.length + depth.ask_prices.length;
  return invalid > 0 && levels === 0 ? undefined : depth;
}

function levelProblem(l: DepthLevel): string | undefined {
  if ((l.price !== null && !Number.isFinite(l.price)) || (l.volume !== null && !Number.isFinite(l.volume))) return 'non_finite';
  if (l.price !== null && l.price < 0) return 'non_positive_price';
  if (l.volume !== null && l.volume < 0) return 'negative_volume';
  return undefined;
}
