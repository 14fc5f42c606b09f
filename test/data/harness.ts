// A Loader over scripted adapters and a chosen tier, with a hand-moved clock, and the resources
// the loader tests run through the same code (quotes: batched; candles: one call per query).
import type { AdapterMethod, CandleQuery } from '../../adapters/types.ts';
import { createMemoryTier, type MemoryTier } from '../../src/cache/memory-tier.ts';
import type { Tier, TierWindows } from '../../src/cache/tier.ts';
import { Loader, type DataEntry, type ResourceSpec } from '../../src/data/loader.ts';
import { createResources, DEFAULT_CACHE_POLICY, type CachePolicy, type Resources } from '../../src/data/resources/index.ts';
import { DAY_MS } from '../../src/markets/time.ts';
import { AdapterRouter, type RoutingConfig } from '../../src/upstream/router.ts';
import type { Resilience } from '../../src/upstream/resilience.ts';
import { fakeAdapter, fakeCandles, fakeQuote, type FakeAdapter } from '../helpers/fake-adapter.ts';
import { manualClock, MapTier, ref, type Clock } from './fakes.ts';

/** Wednesday 2025-06-18 10:15:30 Asia/Shanghai: CN and HK in session (quotes get the open TTL). */
export const T0 = Date.UTC(2025, 5, 18, 2, 15, 30);

export const QUOTE_WINDOWS: TierWindows = { ttlMs: 2_000, swrMs: 1_000, sieMs: 60_000 };
export const CANDLE_WINDOWS: TierWindows = { ttlMs: 10_000, swrMs: 5_000, sieMs: 100_000 };
export const NEGATIVE_WINDOWS: TierWindows = { ttlMs: 30_000, swrMs: 0, sieMs: 0 };

export const POLICY: CachePolicy = {
  ...DEFAULT_CACHE_POLICY,
  quotes: { openTtlMs: QUOTE_WINDOWS.ttlMs, closedTtlMs: 600_000, swrMs: QUOTE_WINDOWS.swrMs, sieMs: QUOTE_WINDOWS.sieMs },
  candles: { ...CANDLE_WINDOWS },
  negative: { ...NEGATIVE_WINDOWS },
};

export type TierKind = 'memory' | 'map';

export interface Harness {
  loader: Loader;
  clock: Clock;
  resources: Resources;
  adapters: Map<string, FakeAdapter>;
  vendor: FakeAdapter;
  /** The first tier (real memory tier or a MapTier named 'fake'). */
  tier: Tier<DataEntry>;
  memory: MemoryTier<DataEntry> | undefined;
  map: MapTier<DataEntry> | undefined;
  /** Extra tiers after the first. */
  lower: MapTier<DataEntry>[];
  joins: number[];
  fetched: Array<{ adapter: string; region: string }>;
  router: AdapterRouter;
  /** The DataEntry the first tier holds for a cache key (any state), or undefined. */
  stored(key: string): DataEntry | undefined;
}

export interface HarnessOptions {
  tier?: TierKind;
  /** Adapters; default one 'vendor' knowing `known`. */
  adapters?: FakeAdapter[];
  known?: string[];
  routing?: Partial<RoutingConfig>;
  lowerTiers?: string[];
  simulated?: string[];
  resilience?: Map<string, Resilience>;
}

export function harness(options: HarnessOptions = {}): Harness {
  const clock = manualClock(T0);
  const list = options.adapters ?? [fakeAdapter('vendor', { known: options.known ?? [] })];
  const adapters = new Map(list.map((a) => [a.id, a]));
  const first = list[0].id;
  const routing: RoutingConfig = {
    markets: { CN: [first], HK: [first], US: [first] },
    overrides: {},
    ...options.routing,
  };
  const router = new AdapterRouter(adapters, routing, options.resilience ?? new Map());
  const kind = options.tier ?? 'memory';
  const memory = kind === 'memory' ? createMemoryTier<DataEntry>({ maxBytes: 8 * 1024 * 1024, now: clock.now }) : undefined;
  const map = kind === 'map' ? new MapTier<DataEntry>('fake', clock.now) : undefined;
  const tier = (memory ?? map) as Tier<DataEntry>;
  const lower = (options.lowerTiers ?? []).map((name) => new MapTier<DataEntry>(name, clock.now));
  const joins: number[] = [];
  const fetched: Array<{ adapter: string; region: string }> = [];
  const simulated = new Set(options.simulated ?? []);
  const loader = new Loader({
    router,
    tiers: [tier, ...lower],
    now: clock.now,
    isSimulated: (id) => simulated.has(id),
    onJoin: (_resource, joined) => joins.push(joined),
    onFetched: (adapter, region) => fetched.push({ adapter, region }),
  });
  const stored = (key: string): DataEntry | undefined => {
    if (memory !== undefined) return memory.peek(key)?.value;
    return map?.map.get(key)?.value;
  };
  return {
    loader, clock, resources: createResources(POLICY), adapters, vendor: list[0], tier, memory, map, lower, joins, fetched, router, stored,
  };
}

/** One resource, driven through the same tests. */
export interface ResourceCase<Q> {
  name: 'quotes' | 'candles';
  spec(resources: Resources): ResourceSpec<Q, unknown>;
  query(symbol: string): Q;
  method: AdapterMethod;
  windows: TierWindows;
  /** The value the scripted adapter answers for `symbol` at `version`. */
  value(symbol: string, version: number): unknown;
}

export const QUOTES_CASE: ResourceCase<ReturnType<typeof ref>> = {
  name: 'quotes',
  spec: (r) => r.quotes as ResourceSpec<ReturnType<typeof ref>, unknown>,
  query: (symbol) => ref(symbol),
  method: 'getQuotes',
  windows: QUOTE_WINDOWS,
  value: (symbol, version) => fakeQuote(symbol, version),
};

/** A closed window (ends 10 days ago), so the closed-bars windows apply. */
export const CANDLES_CASE: ResourceCase<CandleQuery> = {
  name: 'candles',
  spec: (r) => r.candles as ResourceSpec<CandleQuery, unknown>,
  query: (symbol) => ({ symbol: ref(symbol), period: '1d', start: T0 - 40 * DAY_MS, end: T0 - 10 * DAY_MS }),
  method: 'getCandles',
  windows: CANDLE_WINDOWS,
  value: (_symbol, version) => fakeCandles(version),
};

export const CASES = [QUOTES_CASE, CANDLES_CASE] as Array<ResourceCase<unknown>>;
