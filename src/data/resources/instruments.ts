// Instrument metadata: by symbol, native batches, reference TTL; kept in the history store per
// adapter, so a fresh instance can name the symbols it has stored while the vendor is down.
import type { Instrument as InstrumentValue, SymbolRef } from '../../domain.ts';
import type { CacheWindows } from '../../cache/ttl-policy.ts';
import { Instrument } from '../../schemas.ts';
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
  spec: ({ policy, now, history, historyOffFor }) => ({
    ...bySymbolSpec<InstrumentValue>('instruments', 'getInstruments', (value) => ttl({ notFound: value === undefined }, policy)),
    ...(history === undefined ? {} : { store: referenceStore<InstrumentValue>('instruments', history, historyOffFor ?? new Set(), now) }),
  }),
};
