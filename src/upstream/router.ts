// Routing (DESIGN.md 6): config maps each market to an ordered adapter chain, with per-resource
// overrides. Capabilities are data (adapters/types.ts) and are read here: an adapter that does not
// serve a resource in a market, a base period, or raw prices is skipped, never called. Each call
// runs under the adapter's resilience layer; on an upstream failure the next adapter is tried.
import type { Adapter, CallContext, Resource } from '../../adapters/types.ts';
import type { BasePeriod, Region } from '../domain.ts';
import { AppError, isAppError } from '../errors.ts';
import type { Resilience } from './resilience.ts';

export interface RoutingConfig {
  markets: Record<Region, string[]>;
  overrides: Record<string, Partial<Record<Region, string[]>>>;
}

/** What a request needs beyond resource × market. */
export interface Need {
  period?: BasePeriod;
  rawPrices?: boolean;
}

export function serves(adapter: Adapter, resource: Resource, region: Region, need: Need = {}): boolean {
  const caps = adapter.capabilities;
  if (!caps.resources[resource]) return false;
  const markets = caps.resourceMarkets?.[resource] ?? caps.markets;
  if (!markets.includes(region)) return false;
  if (need.period !== undefined && !caps.periods[need.period]) return false;
  if (need.rawPrices === true && !caps.rawPrices) return false;
  return true;
}

export class AdapterRouter {
  readonly adapters: ReadonlyMap<string, Adapter>;
  readonly #routing: RoutingConfig;
  readonly #resilience: ReadonlyMap<string, Resilience>;

  constructor(adapters: ReadonlyMap<string, Adapter>, routing: RoutingConfig, resilience: ReadonlyMap<string, Resilience>) {
    this.adapters = adapters;
    this.#routing = routing;
    this.#resilience = resilience;
    for (const chain of this.#allChains()) {
      for (const id of chain) {
        if (!adapters.has(id)) throw new Error(`routing names adapter '${id}', which is not configured`);
      }
    }
  }

  *#allChains(): Iterable<string[]> {
    yield* Object.values(this.#routing.markets);
    for (const perMarket of Object.values(this.#routing.overrides)) {
      for (const chain of Object.values(perMarket)) if (chain) yield chain;
    }
  }

  /** The configured chain of ids for `resource` in `region`, before capabilities. */
  configuredChain(resource: Resource, region: Region): string[] {
    return this.#routing.overrides[resource]?.[region] ?? this.#routing.markets[region];
  }

  /** Adapters able to serve the request, in chain order. */
  chain(resource: Resource, region: Region, need: Need = {}): Adapter[] {
    const out: Adapter[] = [];
    for (const id of this.configuredChain(resource, region)) {
      const adapter = this.adapters.get(id);
      if (adapter !== undefined && serves(adapter, resource, region, need)) out.push(adapter);
    }
    return out;
  }

  resilience(adapterId: string): Resilience | undefined {
    return this.#resilience.get(adapterId);
  }

  /**
   * Run `call` on the first adapter of the chain; on an upstream failure (5xx AppError or an
   * unexpected exception) move to the next. Client errors (4xx) are answers, not failures.
   * `call` gets `vendor`, which runs one logical vendor call under the adapter's resilience layer
   * (its own deadline, breaker verdict, concurrency slot and count): what `call` answers without
   * it (stored history) touches none of them. The first vendor call's deadline starts when the
   * data was needed (queueing counts); later ones, and other adapters', when they start.
   */
  async serve<T>(
    resource: Resource, region: Region, call: (adapter: Adapter, vendor: VendorCall) => Promise<T>,
    options: { need?: Need; neededAt?: number } = {},
  ): Promise<{ value: T; adapter: Adapter }> {
    const chain = this.chain(resource, region, options.need);
    if (chain.length === 0) {
      throw new AppError('UPSTREAM_ERROR', `no configured adapter serves ${resource} for market ${region}`, {
        retryable: false,
        details: { resource, market: region },
      });
    }
    let lastError: unknown;
    let neededAt = options.neededAt;
    for (const adapter of chain) {
      const resilience = this.#resilience.get(adapter.id);
      const vendor: VendorCall = (fn, callOptions) => {
        const at = callOptions?.neededAt ?? neededAt;
        neededAt = undefined;
        return resilience ? resilience.call(adapter, resource, fn, at) : fn({});
      };
      try {
        return { value: await call(adapter, vendor), adapter };
      } catch (error) {
        if (isAppError(error) && error.status < 500) throw error;
        lastError = error;
        neededAt = undefined;
      }
    }
    throw isAppError(lastError)
      ? lastError
      : new AppError('UPSTREAM_ERROR', 'the upstream vendor failed', { cause: lastError });
  }

  /** `serve` for the common case: one vendor call per adapter tried. */
  run<T>(
    resource: Resource, region: Region, call: (adapter: Adapter, ctx: CallContext) => Promise<T>,
    options: { need?: Need; neededAt?: number } = {},
  ): Promise<{ value: T; adapter: Adapter }> {
    return this.serve(resource, region, (adapter, vendor) => vendor((ctx) => call(adapter, ctx)), options);
  }
}

/**
 * One logical vendor call under an adapter's resilience layer (router.serve). `options.neededAt`:
 * when its deadline starts, from a caller that waited for a lock first (the candle store's series
 * lock): no lock wait counts against a vendor call's deadline.
 */
export type VendorCall = <R>(fn: (ctx: CallContext) => Promise<R>, options?: { neededAt?: number }) => Promise<R>;
