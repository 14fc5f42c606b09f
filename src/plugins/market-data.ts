// Market data: the resources (from their descriptors, with the history store in front of the
// vendors for candles), the one loader over the caches' tiers and the router, and the service the
// routes call. Owns the candle builder's worker (closed with the app).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config/schema.ts';
import { Loader } from '../data/loader.ts';
import { createResources, policyFromConfig } from '../data/resources/index.ts';
import type { Market } from '../domain.ts';
import { configureCalendarMemo, DEFAULT_CALENDAR_MEMO_MAX_BYTES, warmCalendar } from '../markets/calendar.ts';
import { MarketDataService } from '../service/market-data.ts';

declare module 'fastify' {
  interface FastifyInstance {
    service: MarketDataService;
  }
}

export const marketDataPlugin = fp(async (app: FastifyInstance, options: { config: Config; now: () => number }) => {
  const { config, now } = options;
  const { router, simulated, hasRealVendor } = app.upstream;
  const metrics = app.metrics;
  // The calendar's memos are process-wide; their byte budget follows the config of the app built last.
  configureCalendarMemo({ maxBytes: config.cache.calendarMemoMaxBytes ?? DEFAULT_CALENDAR_MEMO_MAX_BYTES });
  // Nothing at boot needs a market's local time, and the first use loads ICU's time-zone data
  // (~25 ms): it is loaded just after the server listens, so /healthz answers sooner and the first
  // data request does not wait for it either.
  app.addHook('onListen', (done) => {
    setImmediate(() => warmCalendar(now()));
    done();
  });
  const resources = createResources(policyFromConfig(config.cache), { now, history: app.history.store, historyOffFor: app.history.offFor });
  const simWarnedAt = new Map<Market, number>();
  const loader = new Loader({
    router,
    tiers: app.caches.dataTiers,
    now,
    isSimulated: (id) => simulated.has(id),
    lock: app.sharedRedis?.lock,
    // A waiter never waits past the request's deadline: then it fetches itself.
    lockWaitMs: config.upstream.deadlineMs,
    onLookup: (resource, result) => metrics.cacheLookups.inc({ layer: 'data', resource, result }),
    onJoin: (resource, joined) => metrics.singleflightWaiters.inc({ resource }, joined),
    onFetched: (adapter, region) => {
      if (!hasRealVendor || !simulated.has(adapter)) return;
      const last = simWarnedAt.get(region) ?? Number.NEGATIVE_INFINITY;
      if (now() - last < 60_000) return;
      simWarnedAt.set(region, now());
      app.log.warn({ adapter, market: region }, 'SIMULATED DATA served: the real vendors of this market failed and the sim fallback answered');
    },
  });
  const service = new MarketDataService(loader, resources, now);
  metrics.trackHeavyCandles(() => service.heavyCandles);
  app.decorate('service', service);
  app.addHook('onClose', async () => service.close());
}, { name: 'market-data', dependencies: ['upstream', 'caches', 'history', 'shared-redis', 'metrics'] });
