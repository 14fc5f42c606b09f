// How long each kind of data may be cached (DESIGN.md 5). Pure: no clock, no I/O.
//
//   DEFAULT_CACHE_POLICY: CachePolicy              every number in ms; config overrides any of them
//   ttlFor(resource, context, policy?): CacheWindows   { ttlMs, swrMs, sieMs } for byte-cache.set()
//
// context (TtlContext):
//   marketOpen        the symbol's market is in a trading session now (lunch break = closed)
//   notFound          a negative entry (unknown symbol / pool): `negative` windows, any resource
//   currentBar        candles only: the data includes the still-forming bar → priced like quotes
//   msUntilBarClose   intraday only: ms until the current minute bar closes (or give nextBarClose + now)
//
// Decisions where DESIGN.md is silent:
//   - intraday in session lives until the current bar closes, floored at `minMs` (a bar closing
//     right now must not give a zero TTL) and capped at `capMs`; without any bar-close information
//     it falls back to the quotes TTL, the safe short choice. Out of session it uses `closedTtlMs`.
//   - a candle window with the forming bar takes the quotes TTL and SWR (it changes with every
//     trade) but keeps the candle stale-if-error window: old bars beat a 503 during an outage,
//     and the response says STALE with its Age.
//   - depth shares the quotes windows for SWR (1 s) and SIE (60 s): both are live data.
//   - negative entries get no SWR/SIE: "unknown" is cheap to ask again and must not outlive a listing.

import type { Resource } from '../../adapters/types.ts';

export interface CacheWindows {
  ttlMs: number;
  swrMs: number;
  sieMs: number;
}

export interface LiveWindows {
  /** TTL while the market is in session. */
  openTtlMs: number;
  /** TTL while it is closed (nights, weekends, holidays, lunch break). */
  closedTtlMs: number;
  swrMs: number;
  sieMs: number;
}

export interface CachePolicy {
  quotes: LiveWindows;
  depth: LiveWindows;
  intraday: {
    /** Floor for the until-bar-close TTL in session. */
    minMs: number;
    /** Cap for the until-bar-close TTL in session. */
    capMs: number;
    closedTtlMs: number;
    swrMs: number;
    sieMs: number;
  };
  /** Closed historical bars; a window with the forming bar uses `quotes` TTL/SWR instead. */
  candles: CacheWindows;
  exFactors: CacheWindows;
  instruments: CacheWindows;
  pools: CacheWindows;
  /** Unknown symbols / pools, whatever the resource. */
  negative: CacheWindows;
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const REFERENCE: CacheWindows = { ttlMs: 6 * HOUR, swrMs: HOUR, sieMs: 7 * DAY };

export const DEFAULT_CACHE_POLICY: CachePolicy = {
  quotes: { openTtlMs: 2 * SECOND, closedTtlMs: MINUTE, swrMs: SECOND, sieMs: MINUTE },
  depth: { openTtlMs: SECOND, closedTtlMs: MINUTE, swrMs: SECOND, sieMs: MINUTE },
  intraday: { minMs: SECOND, capMs: MINUTE, closedTtlMs: MINUTE, swrMs: SECOND, sieMs: DAY },
  candles: { ttlMs: DAY, swrMs: MINUTE, sieMs: DAY },
  exFactors: REFERENCE,
  instruments: REFERENCE,
  pools: REFERENCE,
  negative: { ttlMs: MINUTE, swrMs: 0, sieMs: 0 },
};

export interface TtlContext {
  marketOpen: boolean;
  notFound?: boolean;
  currentBar?: boolean;
  msUntilBarClose?: number;
  /** Epoch ms at which the current bar closes; used with `now` when msUntilBarClose is absent. */
  nextBarClose?: number;
  now?: number;
}

export function ttlFor(resource: Resource, context: TtlContext, policy: CachePolicy = DEFAULT_CACHE_POLICY): CacheWindows {
  if (context.notFound) return { ...policy.negative };
  switch (resource) {
    case 'quotes':
      return live(policy.quotes, context.marketOpen);
    case 'depth':
      return live(policy.depth, context.marketOpen);
    case 'intraday':
      return intraday(policy, context);
    case 'candles': {
      if (!context.currentBar) return { ...policy.candles };
      const quotes = live(policy.quotes, context.marketOpen);
      return { ttlMs: quotes.ttlMs, swrMs: quotes.swrMs, sieMs: policy.candles.sieMs };
    }
    case 'exFactors':
      return { ...policy.exFactors };
    case 'instruments':
      return { ...policy.instruments };
    case 'pools':
      return { ...policy.pools };
  }
}

function live(windows: LiveWindows, marketOpen: boolean): CacheWindows {
  return {
    ttlMs: marketOpen ? windows.openTtlMs : windows.closedTtlMs,
    swrMs: windows.swrMs,
    sieMs: windows.sieMs,
  };
}

function intraday(policy: CachePolicy, context: TtlContext): CacheWindows {
  const { minMs, capMs, closedTtlMs, swrMs, sieMs } = policy.intraday;
  if (!context.marketOpen) return { ttlMs: closedTtlMs, swrMs, sieMs };
  const untilClose = context.msUntilBarClose
    ?? (context.nextBarClose !== undefined && context.now !== undefined ? context.nextBarClose - context.now : undefined);
  if (untilClose === undefined) return { ttlMs: policy.quotes.openTtlMs, swrMs, sieMs };
  return { ttlMs: Math.min(capMs, Math.max(minMs, untilClose)), swrMs, sieMs };
}
