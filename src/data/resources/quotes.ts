// Real-time quotes: by symbol, native batches, TTL by market state.
import { calendarKeyOf } from '../../markets/symbols.ts';
import type { Quote as QuoteValue, SymbolRef } from '../../domain.ts';
import type { LiveWindows } from '../../cache/ttl-policy.ts';
import { Quote } from '../../schemas.ts';
import type { ResourceDescriptor } from './descriptor.ts';
import { bySymbolSpec, liveTtl, liveWindows } from './shared.ts';

const ttl = liveTtl('quotes');

export const quotes: ResourceDescriptor<'quotes', SymbolRef, QuoteValue, LiveWindows, 'quotes' | 'pools'> = {
  name: 'quotes',
  // `pools`: quotes of a whole pool (GET /v1/quotes?universes=…).
  features: ['quotes', 'pools'],
  method: 'getQuotes',
  schema: Quote,
  policy: {
    defaults: { openTtlMs: 2_000, closedTtlMs: 60_000, swrMs: 1_000, sieMs: 60_000 },
    fromConfig: (c) => ({ openTtlMs: c.ttl.quotes.open, closedTtlMs: c.ttl.quotes.closed, swrMs: c.staleWhileRevalidate.quotesMs, sieMs: c.staleIfError.quotesMs }),
  },
  ttl,
  spec: ({ policy }) => bySymbolSpec('quotes', 'getQuotes', (value, ref, now) => liveWindows(ttl, policy, calendarKeyOf(ref), now, value === undefined)),
};
