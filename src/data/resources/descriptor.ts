// What one resource is, as data (DESIGN.md 5, STYLE.md "the data path"): its name, the plan
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
import type { Need, VendorCall } from '../../upstream/router.ts';
import type { ResourceSpec } from '../loader.ts';

export type { AdapterMethod };

/**
 * The cache policy as the TTL lines read it: each resource's own windows under its name, and the
 * windows of unknown symbols under `negative`. (Typed per resource in index.ts.)
 */
export type PolicyView = Readonly<Record<string, unknown>> & { negative: CacheWindows };

/** What a descriptor's loader spec is built from (the app's history store, when candles use it). */
export interface SpecDeps {
  policy: PolicyView;
  /** The candle store in front of the vendor, and the adapters it is off for. */
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

/** Declares a descriptor with its literal name and feature types kept. */
export function defineResource<const Name extends string, Q, T, P, const F extends string = never>(
  descriptor: ResourceDescriptor<Name, Q, T, P, F>,
): ResourceDescriptor<Name, Q, T, P, F> {
  return descriptor;
}

/** The descriptor's own windows in a policy view. */
export function own<P>(policy: PolicyView, name: string): P {
  return policy[name] as P;
}

/** Calls `method` of `adapter` (the router has checked the adapter has it). */
export function call<R>(adapter: Adapter, method: AdapterMethod, vendor: VendorCall, args: (ctx: CallContext) => unknown[], options?: { neededAt?: number }): Promise<R> {
  const fn = adapter[method] as ((...a: unknown[]) => Promise<R>) | undefined;
  if (fn === undefined) throw new Error(`adapter ${adapter.id} has no ${method}`);
  return vendor((ctx) => fn.apply(adapter, args(ctx)), options);
}

export type { Need, Region };
