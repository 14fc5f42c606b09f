// Test doubles for the data path: a Map-backed Tier, a scripted adapter that counts its calls and
// can be held or made to fail per symbol, and a clock the tests move by hand.
import type { Adapter, AdapterCapabilities, CallContext, CandleQuery, Resource } from '../../adapters/types.ts';
import type { Tier, TierHit, TierSetOptions, TierWindows } from '../../src/cache/tier.ts';
import { tierState } from '../../src/cache/tier.ts';
import type { Candles, Quote, Region, SymbolRef } from '../../src/domain.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import { createGate } from '../helpers/gate.ts';

export function ref(symbol: string): SymbolRef {
  const parsed = parseSymbol(symbol);
  if (parsed === undefined) throw new Error(`test: bad symbol ${symbol}`);
  return parsed;
}

export interface Clock {
  now: () => number;
  set(t: number): void;
  advance(ms: number): void;
}

export function manualClock(start: number): Clock {
  let t = start;
  return { now: () => t, set: (v) => { t = v; }, advance: (ms) => { t += ms; } };
}

interface Stored<V> {
  value: V;
  windows: TierWindows;
  storedAt: number;
}

/** A tier over a Map, with the same window semantics as tier.ts; records every set. */
export class MapTier<V> implements Tier<V> {
  readonly name: string;
  readonly map = new Map<string, Stored<V>>();
  readonly sets: Array<{ key: string; value: V; options: TierSetOptions }> = [];
  readonly gets: string[] = [];
  readonly #now: () => number;

  constructor(name: string, now: () => number) {
    this.name = name;
    this.#now = now;
  }

  async get(key: string): Promise<TierHit<V> | undefined> {
    this.gets.push(key);
    const stored = this.map.get(key);
    if (stored === undefined) return undefined;
    const state = tierState(stored.windows, stored.storedAt, this.#now());
    if (state === undefined) return undefined;
    return { value: stored.value, state, age: this.#now() - stored.storedAt, storedAt: stored.storedAt, windows: stored.windows };
  }

  async set(key: string, value: V, options: TierSetOptions): Promise<void> {
    this.sets.push({ key, value, options });
    const windows = { ttlMs: options.ttlMs, swrMs: options.swrMs, sieMs: options.sieMs };
    this.map.set(key, { value, windows, storedAt: options.storedAt ?? this.#now() });
  }

  async delete(key: string): Promise<void> {
    this.map.delete(key);
  }
}

export type Method = 'getQuotes' | 'getDepth' | 'getCandles' | 'getIntraday' | 'getExFactors' | 'getInstruments' | 'listPool';

export interface Call {
  method: Method;
  symbols: string[];
  signal: AbortSignal | undefined;
}

export interface ScriptedAdapter extends Adapter {
  readonly calls: Call[];
  /** Symbols the adapter knows (others are absent from its answers: unknown). */
  readonly known: Set<string>;
  /** A call touching one of these symbols throws the mapped error (whole call). */
  readonly failing: Map<string, unknown>;
  /** Every value carries this version: bump it to tell a refreshed value from the old one. */
  version: number;
  /** Calls wait until release() while held (the call is recorded on entry). */
  hold(): void;
  release(): void;
  callsOf(method: Method): string[][];
}

export const ALL_RESOURCES: Record<Resource, boolean> = {
  quotes: true, depth: true, candles: true, intraday: true, exFactors: true, instruments: true, pools: true,
};

export function capabilities(overrides: Partial<AdapterCapabilities> = {}): AdapterCapabilities {
  return {
    resources: { ...ALL_RESOURCES },
    markets: ['CN', 'HK', 'US'],
    periods: { '1m': true, '1d': true },
    maxBatch: 100,
    rawPrices: true,
    amount: true,
    ...overrides,
  };
}

/** The value a scripted adapter answers for a quote: enough to tell which call produced it. */
export function fakeQuote(symbol: string, version: number): Quote {
  return { symbol, last_price: version } as unknown as Quote;
}

export function fakeCandles(version: number): Candles {
  return { timestamp: [version], open: [1], high: [1], low: [1], close: [version], volume: [1], amount: [1] };
}

export function scriptedAdapter(id: string, options: { known?: string[]; caps?: Partial<AdapterCapabilities> } = {}): ScriptedAdapter {
  const calls: Call[] = [];
  const gate = createGate();

  const enter = async (method: Method, symbols: string[], ctx: CallContext | undefined) => {
    calls.push({ method, symbols, signal: ctx?.signal });
    if (gate.closed !== undefined) await gate.closed;
    for (const s of symbols) if (self.failing.has(s)) throw self.failing.get(s);
  };
  const bySymbol = async <T>(method: Method, refs: SymbolRef[], ctx: CallContext | undefined, make: (s: string) => T) => {
    await enter(method, refs.map((r) => r.symbol), ctx);
    const out = new Map<string, T>();
    for (const r of refs) if (self.known.has(r.symbol)) out.set(r.symbol, make(r.symbol));
    return out;
  };

  const self: ScriptedAdapter = {
    id,
    label: id,
    capabilities: capabilities(options.caps),
    calls,
    known: new Set(options.known ?? []),
    failing: new Map(),
    version: 1,
    getQuotes: (refs, ctx) => bySymbol('getQuotes', refs, ctx, (s) => fakeQuote(s, self.version)),
    getDepth: (refs, ctx) => bySymbol('getDepth', refs, ctx, (s) => ({ symbol: s, version: self.version }) as never),
    getInstruments: (refs, ctx) => bySymbol('getInstruments', refs, ctx, (s) => ({ symbol: s, version: self.version }) as never),
    getExFactors: (refs, ctx) => bySymbol('getExFactors', refs, ctx, () => []),
    async getCandles(query: CandleQuery, ctx) {
      await enter('getCandles', [query.symbol.symbol], ctx);
      return self.known.has(query.symbol.symbol) ? fakeCandles(self.version) : undefined;
    },
    async getIntraday(symbol, ctx) {
      await enter('getIntraday', [symbol.symbol], ctx);
      return self.known.has(symbol.symbol) ? fakeCandles(self.version) : undefined;
    },
    async listPool(pool, ctx) {
      await enter('listPool', [pool], ctx);
      return undefined;
    },
    hold: () => gate.hold(),
    release: () => gate.release(),
    callsOf(method) {
      return calls.filter((c) => c.method === method).map((c) => c.symbols);
    },
  };
  return self;
}

/** Let queued microtasks and immediates run (background refreshes, tier writes). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

export const MARKETS: Region[] = ['CN', 'HK', 'US'];
