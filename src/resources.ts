// The names of the resources the service serves and of the plan features that grant them, as
// plain constants: a leaf every layer may import (adapters declare capabilities under these names,
// keys grant these features, metrics label by them). What each resource does is its descriptor's
// (src/data/resources/); index.ts there checks at compile time that the descriptors name exactly
// this list, in this order, and grant exactly these features.
import { FINANCIALS_RESOURCES } from './financials/types.ts';

export const RESOURCES = [
  'quotes', 'depth', 'candles', 'intraday', 'exFactors', 'instruments', 'pools',
  FINANCIALS_RESOURCES.income, FINANCIALS_RESOURCES.balance_sheet, FINANCIALS_RESOURCES.cash_flow,
  FINANCIALS_RESOURCES.metrics, FINANCIALS_RESOURCES.shares,
] as const;

export type Resource = (typeof RESOURCES)[number];

/** `batch`: the /batch routes of any resource; every other feature is a resource's own. */
export const FEATURES = [
  'quotes', 'pools', 'depth', 'klines_daily', 'klines_minute', 'intraday', 'ex_factors', 'instruments', 'financials', 'batch',
] as const;

export type Feature = (typeof FEATURES)[number];
