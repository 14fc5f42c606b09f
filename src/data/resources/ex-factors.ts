// Ex-dividend factors: every event of a symbol, by symbol, native batches, reference TTL.
import type { ExFactor as ExFactorValue, SymbolRef } from '../../domain.ts';
import type { CacheWindows } from '../../cache/ttl-policy.ts';
import { ExFactor } from '../../schemas.ts';
import type { ResourceDescriptor } from './descriptor.ts';
import { REFERENCE_DEFAULTS, referenceFromConfig } from './reference.ts';
import { bySymbolSpec, referenceTtl } from './shared.ts';

const ttl = referenceTtl('exFactors');

export const exFactors: ResourceDescriptor<'exFactors', SymbolRef, ExFactorValue[], CacheWindows, 'ex_factors'> = {
  name: 'exFactors',
  features: ['ex_factors'],
  method: 'getExFactors',
  schema: ExFactor,
  policy: { defaults: REFERENCE_DEFAULTS, fromConfig: referenceFromConfig },
  ttl,
  spec: ({ policy }) => bySymbolSpec('exFactors', 'getExFactors', (value) => ttl({ notFound: value === undefined }, policy)),
};
