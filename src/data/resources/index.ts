// Every resource the service serves, as one list of descriptors (descriptor.ts), and what derives
// from it: the cache policy (its type, defaults, the config mapping and the TTL lines) and the
// loader specs. The resource names and plan features are plain constants in the leaf
// src/resources.ts, which every layer may import; the checks below keep the descriptors and that
// list equal at compile time.
//
// Adding a resource: a descriptor file here and its entry below, its domain type and schema, the
// adapter method (optional on the Adapter interface) in the adapters that serve it, and its route
// (docs/architecture.md#the-data-path, "Adding a resource").
import type { Config } from '../../../config/schema.ts';
import type { CacheWindows, TtlContext } from '../../cache/ttl-policy.ts';
import { FEATURES, RESOURCES, type Feature, type Resource } from '../../resources.ts';
import type { HistoryStore } from '../../store/index.ts';
import { candles } from './candles.ts';
import { depth } from './depth.ts';
import type { PolicyView } from './descriptor.ts';
import { exFactors } from './ex-factors.ts';
import { financialsBalanceSheet, financialsCashFlow, financialsIncome, financialsMetrics, financialsShares } from './financials.ts';
import { instruments } from './instruments.ts';
import { intraday } from './intraday.ts';
import { pools } from './pools.ts';
import { quotes } from './quotes.ts';

export const RESOURCE_DESCRIPTORS = [
  quotes, depth, candles, intraday, exFactors, instruments, pools,
  financialsIncome, financialsBalanceSheet, financialsCashFlow, financialsMetrics, financialsShares,
] as const;

type Descriptor = (typeof RESOURCE_DESCRIPTORS)[number];
type ByName<N extends Resource> = Extract<Descriptor, { name: N }>;

// The descriptors name exactly src/resources.ts's RESOURCES, in its order, and grant exactly its
// FEATURES (less `batch`, which no descriptor grants): adding, renaming or dropping a resource or a
// feature on one side only fails the type check here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Expect<T extends true> = T;
type NamesOf<T extends readonly { name: string }[]> = { [K in keyof T]: T[K]['name'] };
export type DescriptorsNameResources = Expect<Same<NamesOf<typeof RESOURCE_DESCRIPTORS>, typeof RESOURCES>>;
export type DescriptorsGrantFeatures = Expect<Same<Descriptor['features'][number] | 'batch', Feature>>;

export { FEATURES, RESOURCES, type Feature, type Resource };

/** Each resource's cache windows under its name, and the windows of unknown symbols. */
export type CachePolicy = { [N in Resource]: ByName<N>['policy']['defaults'] } & { negative: CacheWindows };

const policyOf = (each: (d: Descriptor) => unknown, negative: CacheWindows): CachePolicy =>
  Object.fromEntries([...RESOURCE_DESCRIPTORS.map((d) => [d.name, each(d)]), ['negative', negative]]) as CachePolicy;

export const DEFAULT_CACHE_POLICY: CachePolicy = policyOf((d) => d.policy.defaults, { ttlMs: 60_000, swrMs: 0, sieMs: 0 });

/** The TTL policy from the `cache` block of the config: every value configurable. */
export function policyFromConfig(cache: Config['cache']): CachePolicy {
  return policyOf((d) => d.policy.fromConfig(cache), { ttlMs: cache.ttl.negativeMs, swrMs: 0, sieMs: 0 });
}

const byName = new Map<string, Descriptor>(RESOURCE_DESCRIPTORS.map((d) => [d.name, d]));

export function descriptorOf<N extends Resource>(name: N): ByName<N> {
  return byName.get(name) as ByName<N>;
}

/** The windows of `resource` for a value in `context` (its descriptor's TTL line). */
export function ttlFor(resource: Resource, context: TtlContext, policy: CachePolicy = DEFAULT_CACHE_POLICY): CacheWindows {
  return descriptorOf(resource).ttl(context, policy as unknown as PolicyView);
}

/** The loader's spec of each resource. */
export type Resources = { [N in Resource]: ReturnType<ByName<N>['spec']> };

export function createResources(policy: CachePolicy, deps: { now?: () => number; history?: HistoryStore; historyOffFor?: ReadonlySet<string> } = {}): Resources {
  const view = policy as unknown as PolicyView;
  return Object.fromEntries(RESOURCE_DESCRIPTORS.map((d) => [d.name, d.spec({ policy: view, ...deps, now: deps.now ?? Date.now })])) as Resources;
}

export { bucketCount } from './candles.ts';
export type { SpecDeps } from './descriptor.ts';
