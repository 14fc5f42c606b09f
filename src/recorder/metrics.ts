// mdqs_recorder_*: what the recorder did, per job.
import { Counter, Gauge, type Registry } from 'prom-client';

export interface RecorderMetrics {
  progress(job: string, done: number, total: number): void;
  bars(job: string, period: string, n: number): void;
  failure(job: string, reason: string): void;
  finished(job: string, at: number): void;
  runner(held: boolean): void;
  completeness(market: string, period: string, ratio: number): void;
}

export function createRecorderMetrics(registry: Registry): RecorderMetrics {
  const done = new Gauge({ name: 'mdqs_recorder_members_done', help: 'Members of the day being (or last) recorded that are done, per job.', labelNames: ['job'], registers: [registry] });
  const total = new Gauge({ name: 'mdqs_recorder_members_total', help: 'Members of the day being (or last) recorded, per job.', labelNames: ['job'], registers: [registry] });
  const bars = new Counter({ name: 'mdqs_recorder_bars_total', help: 'Closed bars the recorder recorded (fetched or found stored), per job and base period.', labelNames: ['job', 'period'], registers: [registry] });
  const failures = new Counter({ name: 'mdqs_recorder_failures_total', help: 'Member-days (or reference batches) the recorder could not record, per job and reason (timeout, unavailable, upstream_error, bad_response, store, membership, exFactors_*, instruments_*).', labelNames: ['job', 'reason'], registers: [registry] });
  const last = new Gauge({ name: 'mdqs_recorder_last_run_timestamp_seconds', help: 'When the recorder last finished a day of the job (epoch seconds).', labelNames: ['job'], registers: [registry] });
  const completeness = new Gauge({ name: 'mdqs_store_completeness', help: 'Of the member-days the recorder\'s jobs ran (members the vendor knows, within its history window), the share stored, per market and base period (1: nothing missing).', labelNames: ['market', 'period'], registers: [registry] });
  const runner = new Gauge({ name: 'mdqs_recorder_runner', help: '1 while this instance is the store\'s recorder runner (one per store), else 0.', registers: [registry] });
  return {
    progress: (job, d, t) => {
      done.set({ job }, d);
      total.set({ job }, t);
    },
    bars: (job, period, n) => bars.inc({ job, period }, n),
    failure: (job, reason) => failures.inc({ job, reason }),
    finished: (job, at) => last.set({ job }, Math.round(at / 1000)),
    runner: (held) => runner.set(held ? 1 : 0),
    completeness: (market, period, ratio) => completeness.set({ market, period }, ratio),
  };
}
