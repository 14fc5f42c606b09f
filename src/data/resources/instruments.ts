// Instrument metadata: by symbol, native batches, reference TTL.
import type { Instrument as InstrumentValue, SymbolRef } from '../../domain.ts';
import type { CacheWindows } from '../../cache/ttl-policy.ts';
import { Instrument } from '../../schemas.ts';
import type { ResourceDescriptor } from './descriptor.ts';
import { REFERENCE_DEFAULTS, referenceFromConfig } from './reference.ts';
import { bySymbolSpec, referenceTtl } from './shared.ts';

const ttl = referenceTtl('instruments');

export const instruments: ResourceDescriptor<'instruments', SymbolRef, InstrumentValue, CacheWindows, 'instruments'> = {
  name: 'instruments',
  features: ['instruments'],
  method: 'getInstruments',
  schema: Instrument,
  policy: { defaults: REFERENCE_DEFAULTS, fromConfig: referenceFromConfig },
  ttl,
  spec: ({ policy }) => bySymbolSpec('instruments', 'getInstruments', (value) => ttl({ notFound: value === undefined }, policy)),
};
