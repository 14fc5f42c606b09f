// Upstream: one resilience layer per adapter (deadline, breaker, concurrency, count), the router
// over the configured chains, and the boot check of the routing against the adapters'
// capabilities, the boot warning for a vendor without the key it needs (credentials.ts), and the
// deduplicated log of vendor failures (failure-log.ts). Owns the vendors' HTTP layers' and
// adapters' shutdown.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Adapter } from '../../adapters/types.ts';
import type { Config } from '../../config/schema.ts';
import { RoutingError } from '../errors.ts';
import { upstreamSink } from '../metrics.ts';
import type { UpstreamClient } from '../upstream/http.ts';
import { missingKeyWarnings } from '../upstream/credentials.ts';
import { FailureLog } from '../upstream/failure-log.ts';
import { isSimAdapter, resilienceSettings } from '../upstream/registry.ts';
import { createResilience, type Resilience } from '../upstream/resilience.ts';
import { AdapterRouter } from '../upstream/router.ts';
import { checkRouting } from '../upstream/routing-check.ts';

export interface Upstream {
  router: AdapterRouter;
  /** Adapter ids whose data is simulated. */
  simulated: ReadonlySet<string>;
  /** Whether any configured adapter is a real vendor (a sim answer then warns). */
  hasRealVendor: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    upstream: Upstream;
  }
}

export interface UpstreamOptions {
  config: Config;
  adapters: ReadonlyMap<string, Adapter>;
  /** The HTTP layers of HTTP vendors (registry productionDeps().clients): they count their own requests. */
  upstreamClients?: ReadonlyMap<string, UpstreamClient>;
  now: () => number;
}

export const upstreamPlugin = fp(async (app: FastifyInstance, options: UpstreamOptions) => {
  const { config, adapters, now } = options;
  const simulated = new Set([...adapters.keys()].filter((id) => isSimAdapter(id, config.adapters[id])));
  const report = checkRouting(config.routing, adapters, simulated);
  if (report.errors.length > 0) throw new RoutingError(report.errors.join('\n'));
  for (const warning of report.warnings) app.log.warn(warning);
  for (const warning of missingKeyWarnings(adapters.keys(), config.adapters)) app.log.warn({ check: 'credentials' }, warning);
  // One line per adapter and failure class per minute, not a stack trace per failed request.
  const failures = new FailureLog(app.log, now);

  const resilience = new Map<string, Resilience>();
  for (const id of adapters.keys()) {
    const client = options.upstreamClients?.get(id);
    resilience.set(id, createResilience(id, resilienceSettings(id, config.adapters[id], config.upstream), {
      now,
      metrics: upstreamSink(app.metrics),
      budgetRemaining: client ? () => client.budgetRemaining() : undefined,
      countsCalls: client === undefined,
      // Logged once per state change, not per failed request.
      onBreakerStateChange: (adapter, state) => app.log.warn({ adapter, state }, 'circuit breaker state changed'),
    }));
    app.metrics.trackCircuit(id, () => resilience.get(id)?.health().circuit ?? 'closed');
  }
  app.decorate('upstream', {
    router: new AdapterRouter(adapters, config.routing, resilience, { onFailure: (adapter, error) => failures.note(adapter, error) }),
    simulated,
    hasRealVendor: [...adapters.keys()].some((id) => !simulated.has(id)),
  });
  app.addHook('onClose', async () => {
    for (const client of options.upstreamClients?.values() ?? []) await client.close();
  });
}, { name: 'upstream', dependencies: ['metrics'] });
