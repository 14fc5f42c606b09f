// Financial statements (issue 25): five by-symbol resources, one per statement, made by one
// factory. Each caches a symbol's whole series for its statement (every version of every period,
// restatements beside the originals) under `statement`'s own resource name; the routes filter it
// locally (src/financials/select.ts), so no combination of start_date, end_date, latest and as_of
// refetches. All five are served by one adapter method, `getFinancials(refs, statement, ctx)`,
// batched by statement in the adapter's native batches; an adapter says which statements it serves
// in which markets with `capabilities.resources` and `resourceMarkets` under these names, so the
// router never asks a vendor for a statement × market it does not declare.
//
// Cache windows: `cache.ttl.financialsMs` (default one day) with reference data's stale-while-
// revalidate and stale-if-error windows; shared through Redis when configured, like any resource.
import type { BySymbol } from '../../../adapters/types.ts';
import type { Config } from '../../../config/schema.ts';
import type { CacheWindows } from '../../cache/ttl-policy.ts';
import type { SymbolRef } from '../../domain.ts';
import { RECORD_SCHEMAS } from '../../financials/schemas.ts';
import { mergeVersions } from '../../financials/select.ts';
import { FINANCIALS_RESOURCES, type Statement, type StatementRecord } from '../../financials/types.ts';
import { DAY_MS } from '../../markets/time.ts';
import { invoke, type ResourceDescriptor } from './descriptor.ts';
import { bySymbolSpec, referenceTtl } from './shared.ts';

const HOUR = 3_600_000;

export const FINANCIALS_DEFAULTS: CacheWindows = { ttlMs: DAY_MS, swrMs: HOUR, sieMs: 7 * DAY_MS };

function financialsFromConfig(c: Config['cache']): CacheWindows {
  return { ttlMs: c.ttl.financialsMs, swrMs: c.staleWhileRevalidate.referenceMs, sieMs: c.staleIfError.referenceMs };
}

type NameOf<S extends Statement> = (typeof FINANCIALS_RESOURCES)[S];

function financials<S extends Statement>(statement: S): ResourceDescriptor<NameOf<S>, SymbolRef, StatementRecord<S>[], CacheWindows, 'financials'> {
  const name = FINANCIALS_RESOURCES[statement];
  const ttl = referenceTtl(name);
  return {
    name,
    features: ['financials'],
    method: 'getFinancials',
    schema: RECORD_SCHEMAS[statement],
    policy: { defaults: FINANCIALS_DEFAULTS, fromConfig: financialsFromConfig },
    ttl,
    spec: ({ policy }) => ({
      ...bySymbolSpec<StatementRecord<S>[]>(name, 'getFinancials', (value) => ttl({ notFound: value === undefined }, policy)),
      fetch: (adapter, refs, ctx) => invoke<BySymbol<StatementRecord<S>[]>>(adapter, 'getFinancials', refs, statement, ctx),
      // A refetch keeps the versions the cached series held (a restatement never erases the
      // original: as_of still sees what was known then), for as long as the series is cached.
      merge: (previous, fresh) => mergeVersions(previous, fresh),
    }),
  };
}

export const financialsIncome = financials('income');
export const financialsBalanceSheet = financials('balance_sheet');
export const financialsCashFlow = financials('cash_flow');
export const financialsMetrics = financials('metrics');
export const financialsShares = financials('shares');
