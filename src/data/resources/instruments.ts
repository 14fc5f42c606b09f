// Instrument metadata: by symbol, native batches, reference TTL; kept in the history store per
// adapter, so a fresh instance can name the symbols it has stored while the vendor is down. A
// symbol the vendor stops knowing (delisted, or out of its listing) that the store holds for that
// vendor answers its stored instrument marked `status: 'delisted'`, never "unknown".
import type { Adapter, BySymbol, CallContext } from '../../../adapters/types.ts';
import type { Instrument as InstrumentValue, SymbolRef } from '../../domain.ts';
import type { CacheWindows } from '../../cache/ttl-policy.ts';
import { Instrument } from '../../schemas.ts';
import type { HistoryStore } from '../../store/index.ts';
import type { ResourceDescriptor } from './descriptor.ts';
import { REFERENCE_DEFAULTS, referenceFromConfig } from './reference.ts';
import { bySymbolSpec, referenceStore, referenceTtl } from './shared.ts';

const ttl = referenceTtl('instruments');

export const instruments: ResourceDescriptor<'instruments', SymbolRef, InstrumentValue, CacheWindows, 'instruments'> = {
  name: 'instruments',
  features: ['instruments'],
  method: 'getInstruments',
  schema: Instrument,
  policy: { defaults: REFERENCE_DEFAULTS, fromConfig: referenceFromConfig },
  ttl,
  spec: ({ policy, now, history, historyOffFor }) => {
    const spec = bySymbolSpec<InstrumentValue>('instruments', 'getInstruments', (value) => ttl({ notFound: value === undefined }, policy));
    if (history === undefined) return spec;
    const off = historyOffFor ?? new Set<string>();
    return { ...spec, fetch: keepingDelisted(spec.fetch, history, off), store: referenceStore<InstrumentValue>('instruments', history, off, now) };
  },
};

type Fetch = (adapter: Adapter, refs: SymbolRef[], ctx: CallContext) => Promise<BySymbol<InstrumentValue>>;

/**
 * The vendor's answer, with each symbol it does not know (absent, not rejected as invalid) that
 * the store holds an instrument of this vendor for: that instrument, `status: 'delisted'` (its
 * stored delisting date kept). A vendor failure throws as before (the stale row answers then).
 */
export function keepingDelisted(fetch: Fetch, history: HistoryStore, off: ReadonlySet<string>): Fetch {
  return async (adapter, refs, ctx) => {
    const found = await fetch(adapter, refs, ctx);
    if (off.has(adapter.id)) return found;
    const unknown = refs.map((ref) => ref.symbol).filter((symbol) => !found.has(symbol) && found.rejected?.has(symbol) !== true);
    if (unknown.length === 0) return found;
    const rows = await history.reference('instruments', adapter.id, unknown);
    if (rows.size === 0) return found;
    const out: BySymbol<InstrumentValue> = new Map(found);
    if (found.rejected !== undefined) out.rejected = found.rejected;
    for (const [symbol, row] of rows) out.set(symbol, asDelisted(row.value as InstrumentValue));
    return out;
  };
}

/** A stored instrument the vendor no longer lists: delisted, with the delisting date it had, if any. */
export function asDelisted(stored: InstrumentValue): InstrumentValue {
  return { ...stored, ext: { ...stored.ext, status: 'delisted', delisting_date: stored.ext.delisting_date ?? null } };
}
