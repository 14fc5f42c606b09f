// Five-level depth: by symbol, native batches, TTL by market state (shares the quotes' SWR/SIE).
import { calendarKeyOf } from '../../markets/symbols.ts';
import type { Depth as DepthValue, SymbolRef } from '../../domain.ts';
import type { LiveWindows } from '../../cache/ttl-policy.ts';
import { Depth } from '../../schemas.ts';
import type { ResourceDescriptor } from './descriptor.ts';
import { bySymbolSpec, liveTtl, liveWindows } from './shared.ts';

const ttl = liveTtl('depth');

export const depth: ResourceDescriptor<'depth', SymbolRef, DepthValue, LiveWindows, 'depth'> = {
  name: 'depth',
  features: ['depth'],
  method: 'getDepth',
  schema: Depth,
  policy: {
    defaults: { openTtlMs: 1_000, closedTtlMs: 60_000, swrMs: 1_000, sieMs: 60_000 },
    fromConfig: (c) => ({ openTtlMs: c.ttl.depth.open, closedTtlMs: c.ttl.depth.closed, swrMs: c.staleWhileRevalidate.quotesMs, sieMs: c.staleIfError.quotesMs }),
  },
  ttl,
  spec: ({ policy }) => bySymbolSpec('depth', 'getDepth', (value, ref, now) => liveWindows(ttl, policy, calendarKeyOf(ref), now, value === undefined)),
};
