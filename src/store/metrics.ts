// The store's Prometheus series, registered on the registry it is given (the app's own one):
//   mdqs_history_bars_total{period,source}        bars served from the store / fetched upstream
//   mdqs_history_fill_requests_total{adapter,period}  vendor calls the store made to fill gaps
//   mdqs_history_store_bytes{backend}             gauge, size of the store, read at scrape time
//   mdqs_history_store_errors_total               run-time store failures (each degraded to the vendor)
import { Counter, Gauge, type Registry } from 'prom-client';
import type { BasePeriod } from '../domain.ts';

export interface HistoryMetrics {
  bars(period: BasePeriod, source: 'store' | 'upstream', n: number): void;
  fill(adapter: string, period: BasePeriod): void;
  error(): void;
}

const SIZE_REFRESH_MS = 15_000;

export function createHistoryMetrics(
  registry: Registry | undefined, backend: string, size: () => Promise<number>, now: () => number = Date.now,
): HistoryMetrics {
  if (registry === undefined) return { bars() {}, fill() {}, error() {} };
  const registers = [registry];
  const bars = new Counter({ name: 'mdqs_history_bars_total', help: 'Candle bars the history store served (source=store) or fetched from the vendor (source=upstream)', labelNames: ['period', 'source'], registers });
  const fills = new Counter({ name: 'mdqs_history_fill_requests_total', help: 'Vendor calls the history store made to fill missing ranges', labelNames: ['adapter', 'period'], registers });
  const errors = new Counter({ name: 'mdqs_history_store_errors_total', help: 'Run-time history store failures (the request went to the vendor instead)', registers });
  let last = 0;
  let at = -Infinity;
  new Gauge({
    name: 'mdqs_history_store_bytes',
    help: 'Bytes the candle history store occupies',
    labelNames: ['backend'],
    registers,
    async collect() {
      // A scrape must stay cheap: the size query runs at most every SIZE_REFRESH_MS.
      if (now() - at >= SIZE_REFRESH_MS) {
        at = now();
        last = await size().catch(() => last);
      }
      this.set({ backend }, last);
    },
  });
  return {
    bars(period, source, n) {
      if (n > 0) bars.inc({ period, source }, n);
    },
    fill(adapter, period) {
      fills.inc({ adapter, period });
    },
    error() {
      errors.inc();
    },
  };
}
