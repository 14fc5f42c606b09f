// Adapter id → factory. Only adapters named by the routing config are built, each from its
// `adapters.<id>` options block, which config/load.ts has already checked against that adapter's
// options schema (config/adapters.ts, adapters/<type>/options.ts). HTTP vendors get their own HTTP
// layer (http.ts: an undici Agent, one retry, the outbound budget) from the block's `http` settings
// over their own defaults; the same block's timeoutMs and breaker are the adapter's resilience
// layer's (resilienceSettings below). An adapter that makes no HTTP calls has neither.
import type { Adapter, AdapterDeps, AdapterFactory, InvalidRowsEvent } from '../../adapters/types.ts';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { createTickflowAdapter } from '../../adapters/tickflow/index.ts';
import { createEastmoneyAdapter } from '../../adapters/eastmoney/index.ts';
import { createYahooAdapter } from '../../adapters/yahoo/index.ts';
import {
  ADAPTER_TYPES, adapterTypeOf, httpDefaultsOf, type AdapterTypeName, type HttpDefaults, type VendorHttpSettings,
} from '../../config/adapters.ts';
import type { Static } from 'typebox';
import type { ResilienceSettings } from './resilience.ts';
import { createUpstreamHttp, type UpstreamClient, type UpstreamHttpOptions, type UpstreamMetricsSink } from './http.ts';

type OptionsOf<T extends AdapterTypeName> = Static<(typeof ADAPTER_TYPES)[T]['options']>;

/** One factory per adapter type, taking the options its schema allows. */
const FACTORIES: { [T in AdapterTypeName]: AdapterFactory<OptionsOf<T>> } = {
  sim: createSimAdapter,
  tickflow: createTickflowAdapter,
  eastmoney: createEastmoneyAdapter,
  yahoo: createYahooAdapter,
};

function vendorHttpOptions(
  id: string, defaults: HttpDefaults, settings: VendorHttpSettings, extra: { now: () => number; metrics?: UpstreamMetricsSink },
): UpstreamHttpOptions {
  return {
    adapterId: id,
    timeoutMs: settings.timeoutMs ?? defaults.timeoutMs,
    connections: settings.connections ?? defaults.connections,
    retry: { maxRetries: settings.retry?.maxRetries ?? 1, baseDelayMs: settings.retry?.baseDelayMs ?? 100 },
    budget: { max: settings.budget?.max ?? defaults.budget.max, windowMs: settings.budget?.windowMs ?? defaults.budget.windowMs },
    now: extra.now,
    metrics: extra.metrics,
  };
}

export interface RoutingLike {
  markets: Record<string, string[]>;
  overrides: Record<string, Partial<Record<string, string[]>>>;
}

/** Every adapter id the routing refers to, in first-mention order. */
function referencedAdapters(routing: RoutingLike): string[] {
  const ids: string[] = [];
  const add = (chain: string[] | undefined) => {
    for (const id of chain ?? []) if (!ids.includes(id)) ids.push(id);
  };
  for (const chain of Object.values(routing.markets)) add(chain);
  for (const perMarket of Object.values(routing.overrides)) for (const chain of Object.values(perMarket)) add(chain);
  return ids;
}

/**
 * Build the adapters the routing names. A block may set `type: <adapter>` to run a second
 * instance of a vendor under another id (e.g. `tickflow-free: { type: tickflow, baseUrl: … }`).
 * The options are the loaded config's (checked there); an unknown id here is a caller's bug.
 */
export function createAdapters(
  routing: RoutingLike,
  adapterOptions: Record<string, Record<string, unknown>>,
  deps: (id: string, options: Record<string, unknown>) => AdapterDeps,
): Map<string, Adapter> {
  const adapters = new Map<string, Adapter>();
  const ids = referencedAdapters(routing);
  const unknown = ids.filter((id) => adapterTypeOf(id, adapterOptions[id]) === undefined);
  if (unknown.length > 0) {
    throw new Error(`unknown adapter ids in routing: ${unknown.join(', ')} (known: ${Object.keys(FACTORIES).join(', ')}; or set adapters.<id>.type)`);
  }
  for (const id of ids) {
    const options = adapterOptions[id] ?? {};
    const create = FACTORIES[adapterTypeOf(id, options)!] as AdapterFactory<Record<string, unknown>>;
    adapters.set(id, create(options, deps(id, options)));
  }
  return adapters;
}

/**
 * The adapter's one resilience layer. An HTTP vendor's deadline is its block's `http.timeoutMs`,
 * else its own default; its breaker the block's `http.breaker`, else `upstream.breaker`. An adapter
 * that makes no HTTP calls (sim) has `upstream.deadlineMs` and `upstream.breaker`.
 */
export function resilienceSettings(
  id: string, options: Record<string, unknown> | undefined, upstream: { deadlineMs: number; concurrency: number; breaker: { failureThreshold: number; openMs: number } },
): ResilienceSettings {
  const defaults = httpDefaultsOf(id, options);
  const http = (defaults !== undefined ? options?.http ?? {} : {}) as VendorHttpSettings;
  return {
    deadlineMs: http.timeoutMs ?? defaults?.timeoutMs ?? upstream.deadlineMs,
    concurrency: upstream.concurrency,
    maxQueue: Math.max(64, upstream.concurrency * 64),
    breaker: {
      failureThreshold: http.breaker?.failureThreshold ?? upstream.breaker.failureThreshold,
      openMs: http.breaker?.openMs ?? upstream.breaker.openMs,
    },
  };
}

/** True for adapters whose data is simulated (the embedded sim, under any id). */
export function isSimAdapter(id: string, options: Record<string, unknown> | undefined): boolean {
  return adapterTypeOf(id, options) === 'sim';
}

export interface ProductionDeps {
  (id: string, options: Record<string, unknown>): AdapterDeps;
  /** The HTTP layer of each HTTP vendor, for /readyz budgets and closing sockets on shutdown. */
  readonly clients: Map<string, UpstreamClient>;
}

/** Deps for production: the clock, plus an HTTP layer per HTTP vendor (with that vendor's defaults). */
export function productionDeps(now: () => number, metrics?: UpstreamMetricsSink, onInvalidRows?: (event: InvalidRowsEvent) => void): ProductionDeps {
  const clients = new Map<string, UpstreamClient>();
  const deps = (id: string, options: Record<string, unknown>): AdapterDeps => {
    const defaults = httpDefaultsOf(id, options);
    if (defaults === undefined) return { now, onInvalidRows };
    const http = createUpstreamHttp(vendorHttpOptions(id, defaults, (options.http ?? {}) as VendorHttpSettings, { now, metrics }));
    clients.set(id, http);
    return { now, http, onInvalidRows };
  };
  return Object.assign(deps, { clients });
}
