// Adapter id → factory. Only adapters named by the routing config are built, each from its
// `adapters.<id>` options block. HTTP vendors get their own HTTP layer (src/upstream/http.ts: an
// undici Agent, one retry, the outbound budget) from the block's `http` settings; the same
// block's timeoutMs and breaker are the adapter's resilience layer's (resilienceSettings below).
import type { Adapter, AdapterDeps, InvalidRowsEvent } from './types.ts';
import type { ResilienceSettings } from '../src/upstream/resilience.ts';
import { createSimAdapter, type SimOptions } from './sim/index.ts';
import { createTickflowAdapter, type TickflowOptions } from './tickflow/index.ts';
import { createEastmoneyAdapter, type EastmoneyOptions } from './eastmoney/index.ts';
import { createYahooAdapter, type YahooOptions } from './yahoo/index.ts';
import { createUpstreamHttp, type UpstreamClient, type UpstreamHttpOptions, type UpstreamMetricsSink } from '../src/upstream/http.ts';

export type AdapterBuilder = (options: Record<string, unknown>, deps: AdapterDeps) => Adapter;

/** `http` settings of a vendor block; every field optional, defaults below. */
export interface VendorHttpSettings {
  timeoutMs?: number;
  connections?: number;
  retry?: { maxRetries?: 0 | 1; baseDelayMs?: number };
  breaker?: { failureThreshold?: number; openMs?: number };
  /** Outbound requests per window that we never exceed (the vendor's quota). */
  budget?: { max?: number; windowMs?: number };
}

/** Conservative defaults per vendor (reference/vendors.md: keyless vendors throttle early). */
const HTTP_DEFAULTS: Record<string, { timeoutMs: number; connections: number; budget: { max: number; windowMs: number } }> = {
  tickflow: { timeoutMs: 8000, connections: 16, budget: { max: 600, windowMs: 60_000 } },
  eastmoney: { timeoutMs: 5000, connections: 8, budget: { max: 300, windowMs: 60_000 } },
  yahoo: { timeoutMs: 8000, connections: 8, budget: { max: 120, windowMs: 60_000 } },
};

export function vendorHttpOptions(id: string, settings: VendorHttpSettings = {}, extra: { now: () => number; metrics?: UpstreamMetricsSink }): UpstreamHttpOptions {
  const base = HTTP_DEFAULTS[id] ?? HTTP_DEFAULTS.tickflow;
  return {
    adapterId: id,
    timeoutMs: settings.timeoutMs ?? base.timeoutMs,
    connections: settings.connections ?? base.connections,
    retry: { maxRetries: settings.retry?.maxRetries ?? 1, baseDelayMs: settings.retry?.baseDelayMs ?? 100 },
    budget: { max: settings.budget?.max ?? base.budget.max, windowMs: settings.budget?.windowMs ?? base.budget.windowMs },
    now: extra.now,
    metrics: extra.metrics,
  };
}

export const ADAPTER_FACTORIES: Record<string, AdapterBuilder> = {
  sim: (options, deps) => createSimAdapter(options as SimOptions, deps),
  tickflow: (options, deps) => createTickflowAdapter(options as TickflowOptions, deps),
  eastmoney: (options, deps) => createEastmoneyAdapter(options as EastmoneyOptions, deps),
  yahoo: (options, deps) => createYahooAdapter(options as YahooOptions, deps),
};

/** Adapters that talk HTTP and so need an UpstreamHttp in their deps. */
export const HTTP_ADAPTERS = new Set(['tickflow', 'eastmoney', 'yahoo']);

export interface RoutingLike {
  markets: Record<string, string[]>;
  overrides: Record<string, Partial<Record<string, string[]>>>;
}

/** Every adapter id the routing refers to, in first-mention order. */
export function referencedAdapters(routing: RoutingLike): string[] {
  const ids: string[] = [];
  const add = (chain: string[] | undefined) => {
    for (const id of chain ?? []) if (!ids.includes(id)) ids.push(id);
  };
  for (const chain of Object.values(routing.markets)) add(chain);
  for (const perMarket of Object.values(routing.overrides)) for (const chain of Object.values(perMarket)) add(chain);
  return ids;
}

/**
 * Build the adapters the routing names. A block may set `type: <factory>` to run a second
 * instance of a vendor under another id (e.g. `tickflow-free: { type: tickflow, baseUrl: … }`).
 */
export function createAdapters(
  routing: RoutingLike,
  adapterOptions: Record<string, Record<string, unknown>>,
  deps: (id: string, options: Record<string, unknown>) => AdapterDeps,
  factories: Record<string, AdapterBuilder> = ADAPTER_FACTORIES,
): Map<string, Adapter> {
  const adapters = new Map<string, Adapter>();
  const typeOf = (id: string) => String(adapterOptions[id]?.type ?? id);
  const unknown = referencedAdapters(routing).filter((id) => factories[typeOf(id)] === undefined);
  if (unknown.length > 0) {
    throw new Error(`unknown adapter ids in routing: ${unknown.join(', ')} (known: ${Object.keys(factories).join(', ')}; or set adapters.<id>.type)`);
  }
  for (const id of referencedAdapters(routing)) {
    const options = adapterOptions[id] ?? {};
    adapters.set(id, factories[typeOf(id)](options, deps(id, options)));
  }
  return adapters;
}

/**
 * The adapter's one resilience layer: its deadline is the vendor block's `http.timeoutMs` (the
 * vendor default for HTTP vendors), else `upstream.deadlineMs`; its breaker the block's
 * `http.breaker`, else `upstream.breaker`.
 */
export function resilienceSettings(
  id: string, options: Record<string, unknown> | undefined, upstream: { deadlineMs: number; concurrency: number; breaker: { failureThreshold: number; openMs: number } },
): ResilienceSettings {
  const type = String(options?.type ?? id);
  const http = (options?.http ?? {}) as VendorHttpSettings;
  const vendorDefault = HTTP_ADAPTERS.has(type) ? HTTP_DEFAULTS[type]?.timeoutMs : undefined;
  return {
    deadlineMs: http.timeoutMs ?? vendorDefault ?? upstream.deadlineMs,
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
  return String(options?.type ?? id) === 'sim';
}

export interface ProductionDeps {
  (id: string, options: Record<string, unknown>): AdapterDeps;
  /** The HTTP layer of each HTTP vendor, for /readyz budgets and closing sockets on shutdown. */
  readonly clients: Map<string, UpstreamClient>;
}

/** Deps for production: the clock, plus an HTTP layer per HTTP vendor. */
export function productionDeps(now: () => number, metrics?: UpstreamMetricsSink, onInvalidRows?: (event: InvalidRowsEvent) => void): ProductionDeps {
  const clients = new Map<string, UpstreamClient>();
  const deps = (id: string, options: Record<string, unknown>): AdapterDeps => {
    const type = String(options.type ?? id);
    if (!HTTP_ADAPTERS.has(type)) return { now, onInvalidRows };
    const http = createUpstreamHttp(vendorHttpOptions(type, options.http as VendorHttpSettings | undefined, { now, metrics }));
    clients.set(id, http);
    return { now, http, onInvalidRows };
  };
  return Object.assign(deps, { clients });
}
