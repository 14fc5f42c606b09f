// Today's (the latest session's) raw 1m bars: one symbol per call; in session the entry lives
// until the current bar closes (floored and capped), closed until the next session edge. Always
// asked of the vendor; when every vendor of the chain fails, the session's 1m bars the history
// store holds answer (stale, the forming bar said to be absent).
import type { CandleQuery } from '../../../adapters/types.ts';
import type { SymbolRef, Candles as CandlesValue } from '../../domain.ts';
import type { HistoryStore } from '../../store/index.ts';
import type { StoreTier } from '../loader.ts';
import type { CacheWindows, TtlContext } from '../../cache/ttl-policy.ts';
import type { LiveWindows } from '../../cache/ttl-policy.ts';
import { isMarketOpen, latestStartedSessionDay, minuteBarLabelFor, minuteBarLabels } from '../../markets/calendar.ts';
import { calendarKeyOf, marketOf } from '../../markets/symbols.ts';
import { Candles } from '../../schemas.ts';
import { candleBytes, formingOf } from './candles.ts';
import { invoke, own, type PolicyView, type ResourceDescriptor } from './descriptor.ts';
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

/** The 1m window of the latest started session, as the candle store reads it. */
function sessionQuery(ref: SymbolRef, now: number): CandleQuery | undefined {
  const key = calendarKeyOf(ref);
  const labels = minuteBarLabels(key, latestStartedSessionDay(key, now), 1);
  if (labels.length === 0) return undefined;
  return { symbol: ref, period: '1m', start: labels[0], end: labels[labels.length - 1] };
}

/** The history store behind intraday: read only when the vendors failed. */
function intradayStore(history: HistoryStore, off: ReadonlySet<string>, now: () => number): StoreTier<SymbolRef, CandlesValue> {
  return {
    keeps: (adapterId) => !off.has(adapterId),
    read: async () => new Map(),
    salvage: async (adapterIds, ref) => {
      const query = sessionQuery(ref, now());
      if (query === undefined) return undefined;
      for (const adapter of adapterIds) {
        const value = await history.salvage(adapter, query);
        if (value !== undefined && value.timestamp.length > 0) return { value, adapter, ageMs: 0 };
      }
      return undefined;
    },
    forming: (ref, value) => {
      const query = sessionQuery(ref, now());
      return query === undefined ? undefined : formingOf(query, value, now());
    },
    symbol: (ref) => ref.symbol,
  };
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
  spec: ({ policy, now, history, historyOffFor }) => ({
    resource: 'intraday',
    key: (ref) => ref.symbol,
    region: (ref) => marketOf(ref),
    batch: false,
    fetch: async (adapter, [ref], ctx) => {
      const found = await invoke<CandlesValue | undefined>(adapter, 'getIntraday', ref, ctx);
      return found === undefined ? new Map() : new Map([[ref.symbol, found]]);
    },
    windows: (value, ref, now) => {
      const key = calendarKeyOf(ref);
      const marketOpen = isMarketOpen(key, now);
      const nextBarClose = marketOpen ? minuteBarLabelFor(key, now, 1) : undefined;
      const windows = ttl({ marketOpen, nextBarClose, now, notFound: value === undefined }, policy);
      if (marketOpen || value === undefined) return windows;
      return { ...windows, ttlMs: Math.max(1, Math.min(windows.ttlMs, nextSessionEdge(key, now) - now)) };
    },
    size: candleBytes,
    ...(history === undefined ? {} : { store: intradayStore(history, historyOffFor ?? new Set(), now) }),
  }),
};
