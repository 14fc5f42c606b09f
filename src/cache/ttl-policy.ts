// How long each kind of data may be cached (docs/architecture.md#caching). Pure: no clock, no I/O.
//
// The windows every resource's TTL line (src/data/resources/<name>.ts) is made of; the policy
// itself (its defaults, the config mapping, ttlFor) derives from the descriptors
// (src/data/resources/index.ts).
//
// context (TtlContext):
//   marketOpen        the symbol's market is in a trading session now (lunch break = closed)
//   notFound          a negative entry (unknown symbol / pool): `negative` windows, any resource
//   currentBar        candles only: the data includes the still-forming bar → priced like quotes
//   msUntilBarClose   intraday only: ms until the current minute bar closes (or give nextBarClose + now)
//
// Decisions where the contract is silent:
//   - intraday in session lives until the current bar closes, floored at `minMs` (a bar closing
//     right now must not give a zero TTL) and capped at `capMs`; without any bar-close information
//     it falls back to the quotes TTL, the safe short choice. Out of session it uses `closedTtlMs`.
//   - a candle window with the forming bar takes the quotes TTL and SWR (it changes with every
//     trade) but keeps the candle stale-if-error window: old bars beat a 503 during an outage,
//     and the response says STALE with its Age.
//   - depth shares the quotes windows for SWR (1 s) and SIE (60 s): both are live data.
//   - negative entries get no SWR/SIE: "unknown" is cheap to ask again and must not outlive a listing.


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

export interface TtlContext {
  marketOpen: boolean;
  notFound?: boolean;
  currentBar?: boolean;
  msUntilBarClose?: number;
  /** Epoch ms at which the current bar closes; used with `now` when msUntilBarClose is absent. */
  nextBarClose?: number;
  now?: number;
}

export function live(windows: LiveWindows, marketOpen: boolean): CacheWindows {
  return {
    ttlMs: marketOpen ? windows.openTtlMs : windows.closedTtlMs,
    swrMs: windows.swrMs,
    sieMs: windows.sieMs,
  };
}
