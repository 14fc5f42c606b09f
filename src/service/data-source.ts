// Where the service gets raw, normalised data: the adapter chain of each market (router.ts).
// This is the seam the caching layer wraps: everything above it sees only these methods.
import type { Adapter, CallContext, CandleQuery } from '../../adapters/types.ts';
import type { Candles, Depth, ExFactor, Instrument, PoolDetail, PoolId, Quote, Region, SymbolRef } from '../domain.ts';
import type { AdapterRouter } from './router.ts';

export interface BatchResources {
  quotes: Quote;
  depth: Depth;
  instruments: Instrument;
  exFactors: ExFactor[];
}
export type BatchResource = keyof BatchResources;

export interface Sourced<T> {
  value: T;
  adapter: string;
}

export interface DataSource {
  batch<R extends BatchResource>(resource: R, region: Region, refs: SymbolRef[]): Promise<{ items: Map<string, BatchResources[R]>; adapter: string }>;
  candles(query: CandleQuery): Promise<Sourced<Candles | undefined>>;
  intraday(ref: SymbolRef): Promise<Sourced<Candles | undefined>>;
  pool(id: PoolId, region: Region): Promise<{ value: PoolDetail | undefined; adapter: Adapter }>;
}

/** Splits `refs` into the adapter's native batch size and calls them one after another. */
async function callBatched<T>(adapter: Adapter, refs: SymbolRef[], call: (chunk: SymbolRef[]) => Promise<Map<string, T>>): Promise<Map<string, T>> {
  const size = Math.max(1, adapter.capabilities.maxBatch);
  if (refs.length <= size) return call(refs);
  const out = new Map<string, T>();
  for (let i = 0; i < refs.length; i += size) {
    for (const [k, v] of await call(refs.slice(i, i + size))) out.set(k, v);
  }
  return out;
}

export function batchCall<R extends BatchResource>(adapter: Adapter, resource: R, refs: SymbolRef[], ctx: CallContext = {}): Promise<Map<string, BatchResources[R]>> {
  switch (resource) {
    case 'quotes':
      return callBatched(adapter, refs, (c) => adapter.getQuotes(c, ctx)) as Promise<Map<string, BatchResources[R]>>;
    case 'depth':
      return callBatched(adapter, refs, (c) => adapter.getDepth(c, ctx)) as Promise<Map<string, BatchResources[R]>>;
    case 'instruments':
      return callBatched(adapter, refs, (c) => adapter.getInstruments(c, ctx)) as Promise<Map<string, BatchResources[R]>>;
    default:
      return callBatched(adapter, refs, (c) => adapter.getExFactors(c, ctx)) as Promise<Map<string, BatchResources[R]>>;
  }
}

/** No caching: every call goes to the adapter chain. */
export class DirectDataSource implements DataSource {
  readonly #router: AdapterRouter;

  constructor(router: AdapterRouter) {
    this.#router = router;
  }

  async batch<R extends BatchResource>(resource: R, region: Region, refs: SymbolRef[]) {
    const { value, adapter } = await this.#router.run(resource, region, (a, ctx) => batchCall(a, resource, refs, ctx));
    return { items: value, adapter: adapter.id };
  }

  async candles(query: CandleQuery) {
    const { value, adapter } = await this.#router.run('candles', query.symbol.region, (a, ctx) => a.getCandles(query, ctx));
    return { value, adapter: adapter.id };
  }

  async intraday(ref: SymbolRef) {
    const { value, adapter } = await this.#router.run('intraday', ref.region, (a, ctx) => a.getIntraday(ref, ctx));
    return { value, adapter: adapter.id };
  }

  pool(id: PoolId, region: Region) {
    return this.#router.run('pools', region, (a, ctx) => a.listPool(id, ctx));
  }
}
