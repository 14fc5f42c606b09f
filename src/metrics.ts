// Prometheus metrics of one app instance, on its own Registry (never prom-client's global one:
// tests build many apps in one process, and a global registry would refuse duplicate names).
//
//   createMetrics(options?): Metrics     the registry plus typed handles
//   metrics.registry.metrics()           the text for GET /metrics (contentType: registry.contentType)
//   metrics.trackCacheBytes(layer, read) mdqs_cache_bytes{layer} read at scrape time
//   metrics.trackCircuit(adapter, read)  mdqs_circuit_state{adapter} read at scrape time
//   upstreamSink(metrics)                the UpstreamMetricsSink for createUpstreamHttp
//
// Names (docs/operations.md#metrics; labels may grow, names may not change):
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
//   mdqs_heavy_candle_bars                                 gauge, base bars held by series built in the worker
//   mdqs_heavy_candle_waiting                              gauge, requests waiting for room among them
//   mdqs_cache_corrupt_total{layer}                        counter, entries whose checksum failed (cache/corruption.ts)
//
// The two gauges are read when scraped, from functions registered once, so the hot path never
// touches them and a breaker's lazy open → half-open move shows without traffic.
//
// The per-request metrics (mdqs_http_requests_total, mdqs_http_request_duration_seconds, the
// per-key counters) are SeriesCounter / SeriesHistogram: a label set is bound once to a plain
// object the request path bumps with arithmetic, read when scraped. prom-client's own Counter and
// Histogram build a label hash string on every call (~0.5 µs a request for the three, on a cache hit
// that costs ~20 µs in all: issue 15). They register on the same Registry and print the same text.

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { registerCorruptionMetric } from './cache/corruption.ts';
import type { BreakerState } from './upstream/breaker.ts';
import type { UpstreamMetricsSink } from './upstream/http.ts';

export interface MetricsOptions {
  /** Also collect prom-client's process metrics (CPU, memory, event loop); off by default. */
  processMetrics?: boolean;
}

/** One label set of a SeriesCounter: bump `value`. */
export interface CounterSeries {
  value: number;
}

/** One label set of a SeriesHistogram: record with observeSeries(). */
export interface HistogramSeries {
  /** Observations per bucket (not cumulative); the last slot is above the highest bound. */
  readonly counts: Float64Array;
  readonly bounds: readonly number[];
  sum: number;
  count: number;
}

export function observeSeries(series: HistogramSeries, value: number): void {
  const { bounds } = series;
  let i = 0;
  while (i < bounds.length && value > bounds[i]) i++;
  series.counts[i] += 1;
  series.sum += value;
  series.count += 1;
}

type LabelValue = string | number;

/** What prom-client's Registry reads from a metric (its get() result). */
interface MetricValue {
  labels: Record<string, LabelValue>;
  value: number;
  metricName?: string;
}

/** Label sets bound once and kept in a Map by their joined values. */
abstract class SeriesMetric<L extends string, S> {
  readonly aggregator = 'sum';
  protected readonly entries = new Map<string, { labels: Record<string, string>; series: S }>();
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];

  constructor(name: string, help: string, labelNames: readonly L[], registry: Registry) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
    // The Registry reads name, help, type, get() and reset(): everything a prom-client metric has that it uses.
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  protected abstract create(): S;

  /** The series of these label values, in labelNames order (created on first use). */
  series(...values: LabelValue[]): S {
    const key = values.length === 1 ? String(values[0]) : values.join('\u0000');
    let entry = this.entries.get(key);
    if (entry === undefined) {
      if (values.length !== this.labelNames.length) throw new Error(`${this.name}: expected labels ${this.labelNames.join(', ')}, got ${values.length} values`);
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => (labels[name] = String(values[i])));
      entry = { labels, series: this.create() };
      this.entries.set(key, entry);
    }
    return entry.series;
  }

  protected seriesOf(labels: Partial<Record<L, LabelValue>>): S {
    for (const name of Object.keys(labels)) {
      if (!this.labelNames.includes(name as L)) throw new Error(`${this.name}: unknown label ${name}`);
    }
    return this.series(...this.labelNames.map((name) => labels[name] ?? ''));
  }

  protected abstract zero(series: S): void;

  /** Zeroes every series in place: a series bound by a request path stays the one printed. */
  reset(): void {
    for (const entry of this.entries.values()) this.zero(entry.series);
  }
}

/** A counter with bound label sets (see the header). */
export class SeriesCounter<L extends string> extends SeriesMetric<L, CounterSeries> {
  readonly type = 'counter';

  protected create(): CounterSeries {
    return { value: 0 };
  }

  protected zero(series: CounterSeries): void {
    series.value = 0;
  }

  inc(labels: Partial<Record<L, LabelValue>>, value = 1): void {
    // As prom-client's Counter: it only goes up.
    if (!(value >= 0) || !Number.isFinite(value)) throw new TypeError(`${this.name}: a counter goes up by a finite amount ≥ 0, not ${value}`);
    this.seriesOf(labels).value += value;
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const values: MetricValue[] = [];
    for (const { labels, series } of this.entries.values()) values.push({ labels, value: series.value });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/** A histogram with bound label sets (see the header), printed as prom-client prints one. */
export class SeriesHistogram<L extends string> extends SeriesMetric<L, HistogramSeries> {
  readonly type = 'histogram';

  readonly bounds: readonly number[];

  constructor(name: string, help: string, labelNames: readonly L[], bounds: readonly number[], registry: Registry) {
    super(name, help, labelNames, registry);
    this.bounds = bounds;
  }

  protected create(): HistogramSeries {
    return { counts: new Float64Array(this.bounds.length + 1), bounds: this.bounds, sum: 0, count: 0 };
  }

  protected zero(series: HistogramSeries): void {
    series.counts.fill(0);
    series.sum = 0;
    series.count = 0;
  }

  observe(labels: Partial<Record<L, LabelValue>>, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`${this.name}: not a finite number: ${value}`);
    observeSeries(this.seriesOf(labels), value);
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const values: MetricValue[] = [];
    for (const { labels, series } of this.entries.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += series.counts[i];
        values.push({ labels: { ...labels, le }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push(
        { labels: { ...labels, le: '+Inf' }, value: series.count, metricName: `${this.name}_bucket` },
        { labels, value: series.sum, metricName: `${this.name}_sum` },
        { labels, value: series.count, metricName: `${this.name}_count` },
      );
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

export interface Metrics {
  registry: Registry;
  httpRequests: SeriesCounter<'route' | 'status'>;
  httpRequestDuration: SeriesHistogram<'route'>;
  upstreamRequests: Counter<'adapter' | 'resource' | 'outcome'>;
  upstreamRequestDuration: Histogram<'adapter' | 'resource'>;
  cacheLookups: Counter<'layer' | 'resource' | 'result'>;
  rateLimited: Counter;
  singleflightWaiters: Counter<'resource'>;
  circuitState: Gauge<'adapter'>;
  cacheBytes: Gauge<'layer'>;
  /** Vendor rows dropped at the adapter boundary (docs/contract.md#shapes-and-units invariants), by reason. */
  invalidRows: Counter<'adapter' | 'resource' | 'reason'>;
  trackCacheBytes(layer: string, read: () => number): void;
  trackCircuit(adapter: string, read: () => BreakerState): void;
  /** Heavy candle requests (service/bars-gate.ts): bars held and requests waiting, read when scraped. */
  trackHeavyCandles(read: () => { held: number; waiting: number }): void;
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
  let heavyReader: (() => { held: number; waiting: number }) | undefined;

  const metrics: Metrics = {
    registry,
    httpRequests: new SeriesCounter('mdqs_http_requests_total', 'HTTP requests served, by route and status.', ['route', 'status'], registry),
    httpRequestDuration: new SeriesHistogram('mdqs_http_request_duration_seconds', 'HTTP request duration, by route.', ['route'], HTTP_BUCKETS, registry),
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
    trackHeavyCandles(read) {
      heavyReader = read;
    },
  };
  new Gauge({
    name: 'mdqs_heavy_candle_bars', help: 'Base bars held by the series being fetched and built in the worker (at most the heavy-request budget).',
    registers,
    collect() {
      if (heavyReader !== undefined) this.set(heavyReader().held);
    },
  });
  new Gauge({
    name: 'mdqs_heavy_candle_waiting', help: 'Requests for series built in the worker waiting for room in the heavy-request budget.',
    registers,
    collect() {
      if (heavyReader !== undefined) this.set(heavyReader().waiting);
    },
  });

  registerCorruptionMetric(registry);
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
