// Today's (the latest session's) raw 1m bars: one symbol per call; in session the entry lives
// until the current bar closes (floored and capped), closed until the next session edge.
import type { SymbolRef, Candles as CandlesValue } from '../../domain.ts';
import type { CacheWindows, TtlContext } from '../../cache/ttl-policy.ts';
import type { LiveWindows } from '../../cache/ttl-policy.ts';
import { isMarketOpen, minuteBarLabelFor } from '../../markets/calendar.ts';
import { Candles } from '../../schemas.ts';
import { candleBytes } from './candles.ts';
import { call, own, type PolicyView, type ResourceDescriptor } from './descriptor.ts';
import { nextSessionEdge } from './shared.ts';

export interface IntradayWindows {
  /** Floor for the until-bar-close TTL in session. */
  minMs: number;
  /** Cap for the until-bar-close TTL in session. */
  capMs: number;
  closedTtlMs: number;
  swrMs: number;
  sieMs: number;
}

// Without bar-close information it falls back to the quotes' TTL, the safe short choice.
function ttl(context: TtlContext, policy: PolicyView): CacheWindows {
  if (context.notFound) return { ...policy.negative };
  const { minMs, capMs, closedTtlMs, swrMs, sieMs } = own<IntradayWindows>(policy, 'intraday');
  if (!context.marketOpen) return { ttlMs: closedTtlMs, swrMs, sieMs };
  const untilClose = context.msUntilBarClose
    ?? (context.nextBarClose !== undefined && context.now !== undefined ? context.nextBarClose - context.now : undefined);
  if (untilClose === undefined) return { ttlMs: own<LiveWindows>(policy, 'quotes').openTtlMs, swrMs, sieMs };
  return { ttlMs: Math.min(capMs, Math.max(minMs, untilClose)), swrMs, sieMs };
}

export const intraday: ResourceDescriptor<'intraday', SymbolRef, CandlesValue, IntradayWindows, 'intraday'> = {
  name: 'intraday',
  features: ['intraday'],
  method: 'getIntraday',
  schema: Candles,
  policy: {
    defaults: { minMs: 1_000, capMs: 60_000, closedTtlMs: 60_000, swrMs: 1_000, sieMs: 86_400_000 },
    fromConfig: (c) => ({
      minMs: 1000, capMs: Math.max(1000, c.ttl.intradayMaxMs), closedTtlMs: c.ttl.quotes.closed,
      swrMs: c.staleWhileRevalidate.quotesMs, sieMs: c.staleIfError.candlesMs,
    }),
  },
  ttl,
  spec: ({ policy }) => ({
    resource: 'intraday',
    key: (ref) => ref.symbol,
    region: (ref) => ref.region,
    batch: false,
    fetch: async (adapter, [ref], vendor) => {
      const found = await call<CandlesValue | undefined>(adapter, 'getIntraday', vendor, (ctx) => [ref, ctx]);
      return found === undefined ? new Map() : new Map([[ref.symbol, found]]);
    },
    windows: (value, ref, now) => {
      const marketOpen = isMarketOpen(ref.region, now);
      const nextBarClose = marketOpen ? minuteBarLabelFor(ref.region, now, 1) : undefined;
      const windows = ttl({ marketOpen, nextBarClose, now, notFound: value === undefined }, policy);
      if (marketOpen || value === undefined) return windows;
      return { ...windows, ttlMs: Math.max(1, Math.min(windows.ttlMs, nextSessionEdge(ref.region, now) - now)) };
    },
    size: candleBytes,
  }),
};
