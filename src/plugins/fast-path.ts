// The cache-hit fast path (http/fast-path.ts): a GET whose finished bytes are in the response
// cache is answered at the front door, before Fastify routes it, with the same key check, rate
// limit, headers and metrics as the normal path; its access line is at debug, summed at info
// (config log.hits). It learns which URLs it may answer from the
// response cache's "stored" events.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config/schema.ts';
import { createFastPath, type FastRoute } from '../http/fast-path.ts';
import type { FrontDoor } from '../http/front-door.ts';
import { createHitSummary } from '../http/hit-summary.ts';
import { createHitLogger, type RequestIds } from '../http/logging.ts';
import { observeSeries, type CounterSeries, type HistogramSeries } from '../metrics.ts';
import { declaredNeeds } from '../routes/common.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Requests the cache-hit fast path has answered (tests tell the two paths apart by it). */
    fastPathServed?: () => number;
  }
}

export const fastPathPlugin = fp(async (app: FastifyInstance, options: { config: Config; now: () => number; frontDoor: FrontDoor; requestIds: RequestIds }) => {
  const { config, now } = options;
  const cache = app.caches.responseCache;
  if (cache === undefined) return;
  const { keys, limitSync, usage } = app.access;
  const metrics = app.metrics;
  let served = 0;
  app.decorate('fastPathServed', () => served);
  // Per recorded route: its metric series, bound once (src/metrics.ts SeriesCounter).
  const bound = new WeakMap<FastRoute, { ok: CounterSeries; notModified: CounterSeries; duration: HistogramSeries }>();
  // log.hits 'summary' (the default): each hit at debug, their counts at info once a window
  // (http/hit-summary.ts); 'lines': each hit at info, as every other request.
  const everyHitAtInfo = config.log.hits === 'lines';
  const logHit = createHitLogger(app.log, everyHitAtInfo ? 'info' : 'debug');
  const summary = everyHitAtInfo ? undefined : createHitSummary(app.log, config.log.hitSummaryMs ?? 60_000);
  if (summary !== undefined) app.addHook('onClose', async () => summary.stop());
  const fastPath = createFastPath({
    keys,
    cache,
    gzipMinBytes: config.cache.gzipMinBytes,
    now,
    limit: (entry, address, at) => limitSync(entry, address, at),
    isClosing: () => app.isClosing(),
    // Behind a proxy the address needs the proxy rules: the normal path then decides.
    address: (req) => (config.server.trustProxy ? undefined : req.socket.remoteAddress),
    // The app's one request-id generator, the normal path's too.
    requestId: options.requestIds,
    onServed: (route, status, entry, startedAt, req, requestIdSent, wallMs) => {
      served += 1;
      usage.record(entry.id, status);
      const ms = performance.now() - startedAt;
      logHit(route, req.url ?? '', route.route, status, requestIdSent, Math.round(ms * 10) / 10, entry.id, wallMs);
      summary?.count(entry.id, route.route, status);
      let series = bound.get(route);
      if (series === undefined) {
        series = {
          ok: metrics.httpRequests.series(route.route, '200'),
          notModified: metrics.httpRequests.series(route.route, '304'),
          duration: metrics.httpRequestDuration.series(route.route),
        };
        bound.set(route, series);
      }
      (status === 200 ? series.ok : series.notModified).value += 1;
      observeSeries(series.duration, ms / 1000);
    },
  });
  app.caches.onStored((request, key) => {
    if (request.method !== 'GET' || request.keyEntry === undefined) return;
    // What the route declares it needs (the function of its parsed query it checks itself).
    const needs = declaredNeeds(request);
    if (needs === undefined) return;
    fastPath.record(request.raw.url ?? '', { key, route: request.routeOptions.url ?? 'unknown', needs, bars: needs.bars ?? 0 });
  });
  options.frontDoor.use((req, res) => fastPath.handle(req, res));
  metrics.trackCacheBytes('fast_path_index', () => fastPath.index.bytes);
}, { name: 'fast-path', dependencies: ['caches', 'access', 'lifecycle', 'metrics'] });
