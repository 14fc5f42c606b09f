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
import {
  createUpstreamHttp, type BudgetDetail, type BudgetMetricsSink, type UpstreamClient, type UpstreamHttpOptions, type UpstreamMetricsSink,
} from './http.ts';
import type { Redis } from 'ioredis';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { commandTimeoutOf } from '../redis/connection.ts';
import { trackRedisHealth } from '../redis/health.ts';

type OptionsOf<T extends AdapterTypeName> = Static<(typeof ADAPTER_TYPES)[T]['options']>;

/** One factory per adapter type, taking the options its schema allows. */
const FACTORIES: { [T in AdapterTypeName]: AdapterFactory<OptionsOf<T>> } = {
  sim: createSimAdapter,
  tickflow: createTickflowAdapter,
  eastmoney: createEastmoneyAdapter,
  yahoo: createYahooAdapter,
};

function vendorHttpOptions(
  id: string, defaults: HttpDefaults, settings: VendorHttpSettings,
  extra: { now: () => number; metrics?: UpstreamMetricsSink; shared?: UpstreamHttpOptions['shared']; budgetMetrics?: BudgetMetricsSink },
): UpstreamHttpOptions {
  return {
    adapterId: id,
    timeoutMs: settings.timeoutMs ?? defaults.timeoutMs,
    connections: settings.connections ?? defaults.connections,
    retry: { maxRetries: settings.retry?.maxRetries ?? 1, baseDelayMs: settings.retry?.baseDelayMs ?? 100 },
    budget: { max: settings.budget?.max ?? defaults.budget.max, windowMs: settings.budget?.windowMs ?? defaults.budget.windowMs },
    now: extra.now,
    metrics: extra.metrics,
    shared: extra.shared,
    budgetMetrics: extra.budgetMetrics,
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
    const adapterDeps = deps(id, options);
    const adapter = create(options, adapterDeps);
    if (adapterDeps.http !== undefined && 'budgetState' in adapterDeps.http) clientsOfAdapters.set(adapter, adapterDeps.http as UpstreamClient);
    adapters.set(id, adapter);
  }
  return adapters;
}

const clientsOfAdapters = new WeakMap<Adapter, UpstreamClient>();

/** The outbound budget of an adapter built here with an HTTP layer (/readyz's adapters body), if any. */
export function budgetOf(adapter: Adapter): BudgetDetail | undefined {
  return clientsOfAdapters.get(adapter)?.budgetState();
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

export interface ProductionDepsOptions {
  /** The shared Redis (any topology): vendor budgets hold for every process together. */
  redis?: Redis;
  /** Processes sharing the vendors (redis.instances × server.workers): each one's share without Redis. Default 1. */
  processes?: number;
  /** Where mdqs_upstream_budget_* go (the app's metrics registry). */
  registry?: Registry;
}

/** mdqs_upstream_budget_*: per vendor, what the outbound budget let through, made wait and refused. */
export function budgetMetrics(registry: Registry, states: () => Map<string, BudgetDetail>): BudgetMetricsSink {
  const existing = registry.getSingleMetric('mdqs_upstream_budget_taken_total') as Counter<string> | undefined;
  const taken = existing ?? new Counter({
    name: 'mdqs_upstream_budget_taken_total', labelNames: ['adapter', 'scope'], registers: [registry],
    help: 'Vendor requests the outbound budget let go, by scope: fleet (counted in Redis for every process) or local (this process\'s share, without Redis or while it is down).',
  });
  const waits = (registry.getSingleMetric('mdqs_upstream_budget_wait_seconds') as Histogram<string> | undefined) ?? new Histogram({
    name: 'mdqs_upstream_budget_wait_seconds', labelNames: ['adapter'], registers: [registry],
    help: 'How long requests that found the vendor budget spent waited for room (then sent, or refused).',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });
  const refused = (registry.getSingleMetric('mdqs_upstream_budget_refused_total') as Counter<string> | undefined) ?? new Counter({
    name: 'mdqs_upstream_budget_refused_total', labelNames: ['adapter', 'reason'], registers: [registry],
    help: 'Vendor requests the outbound budget refused: reason deadline (no room within the request\'s deadline) or paused (the vendor\'s 429 Retry-After).',
  });
  if (existing === undefined) {
    new Gauge({
      name: 'mdqs_upstream_budget_remaining', labelNames: ['adapter', 'scope'], registers: [registry],
      help: 'Requests the vendor\'s outbound budget still allows in its window (fleet: as last seen in Redis; local: this process\'s share).',
      collect() {
        this.reset();
        for (const [adapter, state] of states()) this.set({ adapter, scope: state.scope }, state.remaining);
      },
    });
  }
  return {
    taken: (adapter, scope) => taken.inc({ adapter, scope }),
    waited: (adapter, seconds) => waits.observe({ adapter }, seconds),
    refused: (adapter, reason) => refused.inc({ adapter, reason }),
  };
}

/**
 * Deps for production: the clock, plus an HTTP layer per HTTP vendor (with that vendor's defaults),
 * whose outbound budget is fleet-wide through `shared.redis` when given.
 */
export function productionDeps(
  now: () => number, metrics?: UpstreamMetricsSink, onInvalidRows?: (event: InvalidRowsEvent) => void, shared: ProductionDepsOptions = {},
): ProductionDeps {
  const clients = new Map<string, UpstreamClient>();
  const { redis } = shared;
  const health = redis === undefined ? undefined : trackRedisHealth(redis, { now });
  const sharedBudget = { redis, health, timeoutMs: redis === undefined ? undefined : commandTimeoutOf(redis), processes: Math.max(1, shared.processes ?? 1) };
  const sink = shared.registry === undefined
    ? undefined
    : budgetMetrics(shared.registry, () => new Map([...clients].map(([id, client]) => [id, client.budgetState()])));
  const deps = (id: string, options: Record<string, unknown>): AdapterDeps => {
    const defaults = httpDefaultsOf(id, options);
    if (defaults === undefined) return { now, onInvalidRows };
    const http = createUpstreamHttp(vendorHttpOptions(id, defaults, (options.http ?? {}) as VendorHttpSettings, { now, metrics, shared: sharedBudget, budgetMetrics: sink }));
    clients.set(id, http);
    return { now, http, onInvalidRows };
  };
  return Object.assign(deps, { clients });
}
