// Ex-dividend factors: every event of a symbol, by symbol, native batches, reference TTL; kept in
// the history store per adapter (refreshed after each close and when a stored ex-date passes).
import type { ExFactor as ExFactorValue, SymbolRef } from '../../domain.ts';
import type { CacheWindows } from '../../cache/ttl-policy.ts';
import { ExFactor } from '../../schemas.ts';
import type { ResourceDescriptor } from './descriptor.ts';
import { REFERENCE_DEFAULTS, referenceFromConfig } from './reference.ts';
import { bySymbolSpec, referenceStore, referenceTtl } from './shared.ts';

const ttl = referenceTtl('exFactors');

/** A stored ex-date has passed since the list was fetched: the vendor may have revised it. */
function exDatePassed(events: ExFactorValue[], fetchedAt: number, now: number): boolean {
  return events.some((event) => event.timestamp > fetchedAt && event.timestamp <= now);
}

export const exFactors: ResourceDescriptor<'exFactors', SymbolRef, ExFactorValue[], CacheWindows, 'ex_factors'> = {
  name: 'exFactors',
  features: ['ex_factors'],
  method: 'getExFactors',
  schema: ExFactor,
  policy: { defaults: REFERENCE_DEFAULTS, fromConfig: referenceFromConfig },
  ttl,
  spec: ({ policy, now, history, historyOffFor }) => ({
    ...bySymbolSpec<ExFactorValue[]>('exFactors', 'getExFactors', (value) => ttl({ notFound: value === undefined }, policy)),
    ...(history === undefined ? {} : { store: referenceStore<ExFactorValue[]>('exFactors', history, historyOffFor ?? new Set(), now, exDatePassed) }),
  }),
};
