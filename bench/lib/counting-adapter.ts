// Wrap an adapter to count its calls (the upstream calls the service makes) and, optionally,
// override capabilities (e.g. a smaller maxBatch). Calls pass through unchanged.
import type { Adapter, AdapterCapabilities } from '../../adapters/types.ts';

export type CallCounts = Record<'getQuotes' | 'getDepth' | 'getCandles' | 'getIntraday' | 'getExFactors' | 'getInstruments' | 'listPool', number>;

export interface CountingAdapter {
  adapter: Adapter;
  counts: CallCounts;
  /** Symbols per getQuotes call, in call order. */
  quoteBatches: number[];
  /** Times (performance.now()) at which the upstream calls settled. */
  settledAt: number[];
  total(): number;
}

export function countingAdapter(inner: Adapter, capabilities: Partial<AdapterCapabilities> = {}): CountingAdapter {
  const counts: CallCounts = { getQuotes: 0, getDepth: 0, getCandles: 0, getIntraday: 0, getExFactors: 0, getInstruments: 0, listPool: 0 };
  const quoteBatches: number[] = [];
  const settledAt: number[] = [];
  const track = <T>(name: keyof CallCounts, call: () => Promise<T>): Promise<T> => {
    counts[name] += 1;
    const promise = call();
    const settle = () => settledAt.push(performance.now());
    promise.then(settle, settle);
    return promise;
  };
  const adapter: Adapter = {
    id: inner.id,
    label: inner.label,
    capabilities: { ...inner.capabilities, ...capabilities },
    getQuotes: (symbols, ctx) => {
      quoteBatches.push(symbols.length);
      return track('getQuotes', () => inner.getQuotes!(symbols, ctx));
    },
    getDepth: (symbols, ctx) => track('getDepth', () => inner.getDepth!(symbols, ctx)),
    getCandles: (query, ctx) => track('getCandles', () => inner.getCandles!(query, ctx)),
    getIntraday: (symbol, ctx) => track('getIntraday', () => inner.getIntraday!(symbol, ctx)),
    getExFactors: (symbols, ctx) => track('getExFactors', () => inner.getExFactors!(symbols, ctx)),
    getInstruments: (symbols, ctx) => track('getInstruments', () => inner.getInstruments!(symbols, ctx)),
    listPool: (pool, ctx) => track('listPool', () => inner.listPool!(pool, ctx)),
    ready: inner.ready === undefined ? undefined : () => inner.ready!(),
  };
  return {
    adapter, counts, quoteBatches, settledAt,
    total: () => Object.values(counts).reduce((sum, n) => sum + n, 0),
  };
}
