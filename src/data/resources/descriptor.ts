// What one resource is, as data: its name, the plan
// features its routes grant, the adapter method that serves it, its public schema, its cache
// policy (defaults, the config keys it reads, its TTL line) and how the loader keys, batches and
// fetches it. index.ts lists the descriptors; the Resource union, the feature list, the resource
// lists, the cache policy and policyFromConfig derive from that list.
import type { TSchema } from 'typebox';
import type { Adapter, AdapterMethod, CallContext } from '../../../adapters/types.ts';
import type { Config } from '../../../config/schema.ts';
import type { CacheWindows, TtlContext } from '../../cache/ttl-policy.ts';
import type { HistoryStore } from '../../store/index.ts';
import type { Region } from '../../domain.ts';
import type { Need } from '../../upstream/router.ts';
import type { ResourceSpec } from '../loader.ts';

export type { AdapterMethod };

/**
 * The cache policy as the TTL lines read it: each resource's own windows under its name, and the
 * windows of unknown symbols under `negative`. (Typed per resource in index.ts.)
 */
export type PolicyView = Readonly<Record<string, unknown>> & { negative: CacheWindows };

/** What a descriptor's loader spec is built from (the app's history store, when it has one). */
export interface SpecDeps {
  policy: PolicyView;
  /** The clock (the store tiers' freshness and forming-bar rules). */
  now: () => number;
  /** The history store in front of the vendors, and the adapters it is off for. */
  history?: HistoryStore;
  historyOffFor?: ReadonlySet<string>;
}

export interface ResourceDescriptor<Name extends string = string, Q = any, T = any, P = unknown, F extends string = string> {
  name: Name;
  /** Plan features that grant this resource's routes (empty: any valid key). */
  features: readonly F[];
  /** The adapter method that serves it; an adapter without it never serves the resource. */
  method: AdapterMethod;
  /** The public shape of one item (OpenAPI, docs). */
  schema: TSchema;
  /** Its cache windows: the defaults, and from the `cache` block of the config (its keys named there). */
  policy: { defaults: P; fromConfig(cache: Config['cache']): P };
  /** The TTL line: windows for a value in `context`. */
  ttl(context: TtlContext, policy: PolicyView): CacheWindows;
  /** How the loader keys, batches and fetches it. */
  spec(deps: SpecDeps): ResourceSpec<Q, T>;
}

/** The descriptor's own windows in a policy view. */
export function own<P>(policy: PolicyView, name: string): P {
  return policy[name] as P;
}

/** Calls `method` of `adapter` with `args` (the router has checked the adapter has it; it runs this under the adapter's resilience layer). */
export function invoke<R>(adapter: Adapter, method: AdapterMethod, ...args: unknown[]): Promise<R> {
  const fn = adapter[method] as ((...a: unknown[]) => Promise<R>) | undefined;
  if (fn === undefined) throw new Error(`adapter ${adapter.id} has no ${method}`);
  return fn.apply(adapter, args);
}

export type { Need, Region };
