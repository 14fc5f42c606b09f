// Prometheus metrics of one app instance, on its own Registry (never prom-client's global one:
// tests build many apps in one process, and a global registry would refuse duplicate names).
//
//   createMetrics(options?): Metrics     the registry plus typed handles
//   metrics.registry.metrics()           the text for GET /metrics (contentType: registry.contentType)
//   metrics.trackCacheBytes(layer, read) mdqs_cache_bytes{layer} read at scrape time
//   metrics.trackCircuit(adapter, read)  mdqs_circuit_state{adapter} read at scrape time
//   upstreamSink(metrics)                the UpstreamMetricsSink for createUpstreamHttp
//
// Names (DESIGN.md 4.7; labels may grow, names may not change):
//   mdqs_http_requests_total{route,status}                 counter
//   mdqs_http_request_duration_seconds{route}              histogram
//   mdqs_upstream_requests_total{adapter,resource,outcome} counter, one per attempt or fail-fast
//   mdqs_upstream_request_duration_seconds{adapter,resource} histogram
//   mdqs_cache_lookups_total{layer,resource,result}        counter (result: hit|miss|stale|…)
//   mdqs_rate_limited_total                                counter
//   mdqs_singleflight_waiters_total{resource}              counter, requests that joined a fetch
//   mdqs_circuit_state{adapter}                            gauge, 0 closed, 1 half-open, 2 open
//   mdqs_cache_bytes{layer}                                gauge, bytes charged to the cache
//   mdqs_upstream_invalid_rows_total{adapter,resource,reason} counter, vendor rows dropped
//
// The two gauges are read when scraped, from functions registered once, so the hot path never
// touches them and a breaker's lazy open → half-open move shows without traffic.

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BreakerState } from './upstream/breaker.ts';
import type { UpstreamMetricsSink } from './upstream/http.ts';

export interface MetricsOptions {
  /** Also collect prom-client's process metrics (CPU, memory, event loop); off by default. */
  processMetrics?: boolean;
}

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'route' | 'status'>;
  httpRequestDuration: Histogram<'route'>;
  upstreamRequests: Counter<'adapter' | 'resource' | 'outcome'>;
  upstreamRequestDuration: Histogram<'adapter' | 'resource'>;
  cacheLookups: Counter<'layer' | 'resource' | 'result'>;
  rateLimited: Counter;
  singleflightWaiters: Counter<'resource'>;
  circuitState: Gauge<'adapter'>;
  cacheBytes: Gauge<'layer'>;
  /** Vendor rows dropped at the adapter boundary (DESIGN.md 4.2 invariants), by reason. */
  invalidRows: Counter<'adapter' | 'resource' | 'reason'>;
  trackCacheBytes(layer: string, read: () => number): void;
  trackCircuit(adapter: string, read: () => BreakerState): void;
}

export const CIRCUIT_STATE_VALUE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

// Cache hits take well under a millisecond; vendor calls take up to the deadline (seconds).
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const cacheReaders = new Map<string, () => number>();
  const circuitReaders = new Map<string, () => BreakerState>();

  const metrics: Metrics = {
    registry,
    httpRequests: new Counter({
      name: 'mdqs_http_requests_total', help: 'HTTP requests served, by route and status.',
      labelNames: ['route', 'status'], registers,
    }),
    httpRequestDuration: new Histogram({
      name: 'mdqs_http_request_duration_seconds', help: 'HTTP request duration, by route.',
      labelNames: ['route'], buckets: HTTP_BUCKETS, registers,
    }),
    upstreamRequests: new Counter({
      name: 'mdqs_upstream_requests_total', help: 'Upstream vendor requests (attempts and fail-fast refusals), by outcome.',
      labelNames: ['adapter', 'resource', 'outcome'], registers,
    }),
    upstreamRequestDuration: new Histogram({
      name: 'mdqs_upstream_request_duration_seconds', help: 'Upstream vendor request duration.',
      labelNames: ['adapter', 'resource'], buckets: UPSTREAM_BUCKETS, registers,
    }),
    cacheLookups: new Counter({
      name: 'mdqs_cache_lookups_total', help: 'Cache lookups, by layer, resource and result.',
      labelNames: ['layer', 'resource', 'result'], registers,
    }),
    rateLimited: new Counter({
      name: 'mdqs_rate_limited_total', help: 'Requests refused by the per-key rate limit.', registers,
    }),
    singleflightWaiters: new Counter({
      name: 'mdqs_singleflight_waiters_total', help: 'Requests that joined an upstream fetch already in flight.',
      labelNames: ['resource'], registers,
    }),
    circuitState: new Gauge({
      name: 'mdqs_circuit_state', help: 'Circuit breaker state per adapter: 0 closed, 1 half-open, 2 open.',
      labelNames: ['adapter'], registers,
      collect() {
        for (const [adapter, read] of circuitReaders) this.set({ adapter }, CIRCUIT_STATE_VALUE[read()]);
      },
    }),
    cacheBytes: new Gauge({
      name: 'mdqs_cache_bytes', help: 'Bytes held by each cache layer.',
      labelNames: ['layer'], registers,
      collect() {
        for (const [layer, read] of cacheReaders) this.set({ layer }, read());
      },
    }),
    invalidRows: new Counter({
      name: 'mdqs_upstream_invalid_rows_total', help: 'Vendor rows dropped at the adapter boundary for failing validation, by reason.',
      labelNames: ['adapter', 'resource', 'reason'], registers,
    }),
    trackCacheBytes(layer, read) {
      cacheReaders.set(layer, read);
    },
    trackCircuit(adapter, read) {
      circuitReaders.set(adapter, read);
    },
  };

  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  return metrics;
}

export function upstreamSink(metrics: Metrics): UpstreamMetricsSink {
  return {
    upstream({ adapter, resource, outcome, ms }) {
      metrics.upstreamRequests.inc({ adapter, resource, outcome });
      // Fail-fast refusals never reached the vendor: they would drag the latency histogram to 0.
      if (outcome !== 'circuit_open' && outcome !== 'budget_exhausted') {
        metrics.upstreamRequestDuration.observe({ adapter, resource }, ms / 1000);
      }
    },
  };
}
