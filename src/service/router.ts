// Routing (DESIGN.md 6): config maps each market to an ordered adapter chain, with per-resource
// overrides; the next adapter is tried when one fails upstream or lacks the capability.
import type { Adapter, CallContext, Resource } from '../../adapters/types.ts';
import type { AdapterGuard } from '../upstream/adapter-guard.ts';
import type { Region } from '../domain.ts';
import { AppError, isAppError } from '../errors.ts';

export interface RoutingConfig {
  markets: Record<Region, string[]>;
  overrides: Record<string, Partial<Record<Region, string[]>>>;
}

export class AdapterRouter {
  readonly adapters: ReadonlyMap<string, Adapter>;
  readonly #routing: RoutingConfig;
  readonly guard: AdapterGuard | undefined;

  constructor(adapters: ReadonlyMap<string, Adapter>, routing: RoutingConfig, guard?: AdapterGuard) {
    this.adapters = adapters;
    this.#routing = routing;
    this.guard = guard;
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

  /** Adapters able to serve `resource` for `region`, in chain order. */
  chain(resource: Resource, region: Region): Adapter[] {
    const ids = this.#routing.overrides[resource]?.[region] ?? this.#routing.markets[region];
    const out: Adapter[] = [];
    for (const id of ids) {
      const adapter = this.adapters.get(id);
      if (adapter && adapter.capabilities.resources[resource] && adapter.capabilities.markets.includes(region)) {
        out.push(adapter);
      }
    }
    return out;
  }

  /**
   * Run `call` on the first adapter of the chain; on an upstream failure (5xx AppError or an
   * unexpected exception) move to the next. Client errors (4xx) are answers, not failures.
   */
  async run<T>(resource: Resource, region: Region, call: (adapter: Adapter, ctx: CallContext) => Promise<T>): Promise<{ value: T; adapter: Adapter }> {
    const chain = this.chain(resource, region);
    if (chain.length === 0) {
      throw new AppError('UPSTREAM_ERROR', `no configured adapter serves ${resource} for market ${region}`, {
        retryable: false,
        details: { resource, market: region },
      });
    }
    let lastError: unknown;
    for (const adapter of chain) {
      try {
        const value = this.guard
          ? await this.guard.call(adapter, resource, (ctx) => call(adapter, ctx))
          : await call(adapter, {});
        return { value, adapter };
      } catch (error) {
        if (isAppError(error) && error.status < 500) throw error;
        lastError = error;
      }
    }
    throw isAppError(lastError)
      ? lastError
      : new AppError('UPSTREAM_ERROR', 'the upstream vendor failed', { cause: lastError });
  }
}
