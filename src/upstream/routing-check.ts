// Boot-time checks of the routing against the adapters' declared capabilities (docs/architecture.md#routing):
// a market × resource that no adapter in its chain can serve is reported (a warning, or an error
// under `routing.strict`), and the simulated adapter may not follow a real vendor unless
// `routing.allowSimFallback` says so: a user must never get simulated prices by surprise.
import type { Adapter } from '../../adapters/types.ts';
import { descriptorOf, RESOURCES } from '../data/resources/index.ts';
import type { Region } from '../domain.ts';
import { serves, type RoutingConfig } from './router.ts';

const MARKETS: Region[] = ['CN', 'HK', 'US'];

export interface RoutingReport {
  errors: string[];
  warnings: string[];
}

export function checkRouting(
  routing: RoutingConfig & { allowSimFallback?: boolean; strict?: boolean },
  adapters: ReadonlyMap<string, Adapter>,
  simulated: ReadonlySet<string>,
): RoutingReport {
  const errors: string[] = [];
  const warnings: string[] = [];
  // A declared resource must come with its method (an adapter declares what it serves and has
  // exactly those methods): caught at boot, never as a failed call.
  for (const adapter of adapters.values()) {
    for (const resource of RESOURCES) {
      const method = descriptorOf(resource).method;
      if (adapter.capabilities.resources[resource] === true && typeof adapter[method] !== 'function') {
        errors.push(`adapter ${adapter.id} declares ${resource} but has no ${method}()`);
      }
    }
  }
  for (const market of MARKETS) {
    for (const resource of RESOURCES) {
      const chain = routing.overrides[resource]?.[market] ?? routing.markets[market];
      const firstReal = chain.findIndex((id) => !simulated.has(id));
      const simAfterReal = chain.some((id, index) => simulated.has(id) && firstReal >= 0 && index > firstReal);
      if (simAfterReal && routing.allowSimFallback !== true) {
        errors.push(`routing: ${market} falls back from a real vendor to simulated data (${chain.join(' > ')}); remove the sim adapter from the chain or set routing.allowSimFallback: true`);
      }
      const capable = chain.filter((id) => {
        const adapter = adapters.get(id);
        return adapter !== undefined && serves(adapter, resource, market);
      });
      if (capable.length === 0) {
        const message = `routing: no adapter in the ${market} chain (${chain.join(' > ')}) serves ${resource}; requests for it will fail with 502`;
        (routing.strict === true ? errors : warnings).push(message);
      }
    }
  }
  return { errors: [...new Set(errors)], warnings };
}
