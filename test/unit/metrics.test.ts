import { describe, expect, it } from 'vitest';
import { createMetrics, upstreamSink } from '../../src/metrics.ts';
import type { BreakerState } from '../../src/upstream/breaker.ts';

describe('createMetrics', () => {
  it('registers the documented names on its own registry', async () => {
    const metrics = createMetrics();
    const names = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name).sort();
    expect(names).toEqual([
      'mdqs_cache_bytes',
      // Entries of a shared tier or store blocks that failed their checksum (issue 28.4).
      'mdqs_cache_corrupt_total',
      'mdqs_cache_lookups_total',
      'mdqs_circuit_state',
      'mdqs_heavy_candle_bars',
      'mdqs_heavy_candle_waiting',
      'mdqs_http_request_duration_seconds',
      'mdqs_http_requests_total',
      'mdqs_rate_limited_total',
      'mdqs_singleflight_waiters_total',
      'mdqs_upstream_invalid_rows_total',
      'mdqs_upstream_request_duration_seconds',
      'mdqs_upstream_requests_total',
    ]);
  });

  it('can be created many times in one process', () => {
    expect(() => {
      createMetrics();
      createMetrics();
    }).not.toThrow();
  });

  it('counts with the documented labels', async () => {
    const metrics = createMetrics();
    metrics.httpRequests.inc({ route: '/v1/quotes', status: '200' });
    metrics.httpRequests.inc({ route: '/v1/quotes', status: '200' });
    metrics.cacheLookups.inc({ layer: 'response', resource: 'quotes', result: 'hit' });
    metrics.rateLimited.inc();
    metrics.singleflightWaiters.inc({ resource: 'quotes' }, 199);
    const text = await metrics.registry.metrics();
    expect(text).toContain('mdqs_http_requests_total{route="/v1/quotes",status="200"} 2');
    expect(text).toContain('mdqs_cache_lookups_total{layer="response",resource="quotes",result="hit"} 1');
    expect(text).toContain('mdqs_rate_limited_total 1');
    expect(text).toContain('mdqs_singleflight_waiters_total{resource="quotes"} 199');
  });

  it('reads the gauges when scraped', async () => {
    const metrics = createMetrics();
    let bytes = 1_024;
    let state: BreakerState = 'closed';
    metrics.trackCacheBytes('data', () => bytes);
    metrics.trackCircuit('tickflow', () => state);
    expect(await metrics.registry.metrics()).toContain('mdqs_cache_bytes{layer="data"} 1024');
    bytes = 2_048;
    state = 'open';
    let text = await metrics.registry.metrics();
    expect(text).toContain('mdqs_cache_bytes{layer="data"} 2048');
    expect(text).toContain('mdqs_circuit_state{adapter="tickflow"} 2');
    state = 'half_open';
    text = await metrics.registry.metrics();
    expect(text).toContain('mdqs_circuit_state{adapter="tickflow"} 1');
  });

  it('feeds upstream events into the counter and, for real requests, the histogram', async () => {
    const metrics = createMetrics();
    const sink = upstreamSink(metrics);
    sink.upstream({ adapter: 'yahoo', resource: 'candles', outcome: 'ok', ms: 120 });
    sink.upstream({ adapter: 'yahoo', resource: 'candles', outcome: 'circuit_open', ms: 0 });
    const text = await metrics.registry.metrics();
    expect(text).toContain('mdqs_upstream_requests_total{adapter="yahoo",resource="candles",outcome="ok"} 1');
    expect(text).toContain('mdqs_upstream_requests_total{adapter="yahoo",resource="candles",outcome="circuit_open"} 1');
    expect(text).toContain('mdqs_upstream_request_duration_seconds_count{adapter="yahoo",resource="candles"} 1');
    expect(text).toContain('mdqs_upstream_request_duration_seconds_sum{adapter="yahoo",resource="candles"} 0.12');
  });
});
