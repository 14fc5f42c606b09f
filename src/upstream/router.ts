// Routing (docs/architecture.md#routing): config maps each market to an ordered adapter chain, with per-resource
// overrides. Capabilities are data (adapters/types.ts) and are read here: an adapter that does not
// serve a resource in a market, a base period, or raw prices is skipped, never called. Each call
// runs under the adapter's resilience layer; on an upstream failure the next adapter is tried.
import type { Adapter, CallContext, Resource } from '../../adapters/types.ts';
import type { BasePeriod, Market, Region } from '../domain.ts';
import { AppError, isAppError } from '../errors.ts';
import { attemptOf, chainFailure, type Attempt } from './attempts.ts';
import type { Resilience } from './resilience.ts';

export { asUpstreamError } from './attempts.ts';

export interface RoutingConfig {
  markets: Record<Region, string[]>;
  overrides: Record<string, Partial<Record<Region, string[]>>>;
}

/** What a request needs beyond resource × market. */
export interface Need {
  period?: BasePeriod;
  rawPrices?: boolean;
}

/** The configured chain a market takes: China futures go through CN's, its adapters filtered by capability. */
function chainMarket(market: Market): Region {
  return market === 'CN_FUTURES' ? 'CN' : market;
}

export function serves(adapter: Adapter, resource: Resource, region: Market, need: Need = {}): boolean {
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
  readonly #onFailure: ((adapter: string, error: unknown) => void) | undefined;

  /**
   * `onFailure`: every failed logical call (an upstream failure: a 5xx AppError or an unexpected
   * exception, fail-fast refusals included), e.g. for the deduplicated failure log (failure-log.ts).
   */
  constructor(
    adapters: ReadonlyMap<string, Adapter>, routing: RoutingConfig, resilience: ReadonlyMap<string, Resilience>,
    options: { onFailure?: (adapter: string, error: unknown) => void } = {},
  ) {
    this.adapters = adapters;
    this.#routing = routing;
    this.#resilience = resilience;
    this.#onFailure = options.onFailure;
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
  configuredChain(resource: Resource, market: Market): string[] {
    const region = chainMarket(market);
    return this.#routing.overrides[resource]?.[region] ?? this.#routing.markets[region];
  }

  /** Adapters able to serve the request, in chain order. */
  chain(resource: Resource, region: Market, need: Need = {}): Adapter[] {
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

  /** The answer when no configured adapter serves `resource` in `region` (a configuration gap, not a vendor failure). */
  unserved(resource: Resource, region: Market): AppError {
    return new AppError('UPSTREAM_ERROR', `no configured adapter serves ${resource} for market ${region}`, {
      retryable: false,
      details: { resource, market: region },
    });
  }

  /**
   * One logical vendor call of `adapter` under its resilience layer: its own deadline (from
   * `neededAt`, when the data was first needed, so queueing counts; else from now), breaker
   * verdict, concurrency slot, budget and count. The loader calls it for each request a store
   * pass needs, and `run` for each adapter it tries.
   */
  call<T>(adapter: Adapter, resource: Resource, fn: (ctx: CallContext) => Promise<T>, neededAt?: number, lane?: 'user' | 'background'): Promise<T> {
    const resilience = this.#resilience.get(adapter.id);
    const result = resilience ? resilience.call(adapter, resource, fn, neededAt, lane) : fn({});
    const onFailure = this.#onFailure;
    if (onFailure !== undefined) {
      result.catch((error: unknown) => {
        if (!(isAppError(error) && error.status < 500)) onFailure(adapter.id, error);
      });
    }
    return result;
  }

  /**
   * Run `call` on the first adapter of the chain; on an upstream failure (5xx AppError or an
   * unexpected exception) move to the next. Client errors (4xx) are answers, not failures. Each
   * attempt is one logical vendor call (`call` above); the first one's deadline starts when the
   * data was needed (queueing counts), later ones' when they start. When every adapter failed, the
   * last failure answers with every attempt in `details.attempts` (attempts.ts).
   */
  async run<T>(
    resource: Resource, region: Market, call: (adapter: Adapter, ctx: CallContext) => Promise<T>,
    options: { need?: Need; neededAt?: number } = {},
  ): Promise<{ value: T; adapter: Adapter }> {
    const chain = this.chain(resource, region, options.need);
    if (chain.length === 0) throw this.unserved(resource, region);
    let lastError: unknown;
    const attempts: Attempt[] = [];
    let neededAt = options.neededAt;
    for (const adapter of chain) {
      try {
        return { value: await this.call(adapter, resource, (ctx) => call(adapter, ctx), neededAt), adapter };
      } catch (error) {
        if (isAppError(error) && error.status < 500) throw error;
        lastError = error;
        attempts.push(attemptOf(adapter.id, error));
        neededAt = undefined;
      }
    }
    throw chainFailure(attempts, lastError);
  }
}
