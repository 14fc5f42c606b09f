// autocannon, the way fastify/benchmarks runs it: `-c 100 -p 10`, a warm-up round, then a measured
// round. Only the measured round is reported.
import autocannon from 'autocannon';
import { coresUsed, foreignShare, snapshot } from './cpu.ts';

export interface LoadOptions {
  url: string;
  path: string;
  headers?: Record<string, string>;
  connections?: number;
  pipelining?: number;
  warmupSeconds: number;
  seconds: number;
  /** Mutates each request (random keys for the soak). */
  setupRequest?: (request: { path: string }) => { path: string };
  /** Processes of the benchmark (servers), for the foreign CPU share. */
  pids?: number[];
}

export interface LoadResult {
  reqPerSec: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  /** Mean response body+headers bytes, from autocannon's throughput. */
  bytesPerResponse: number;
  /** Share of the machine used by other processes during the measured round, 0..1. */
  foreignCpu: number;
  /** Cores used during the measured round by autocannon (this process) and by each of `pids`. */
  generatorCores: number;
  serverCores: number[];
}

function once(options: LoadOptions, seconds: number): Promise<autocannon.Result> {
  const requests = options.setupRequest === undefined ? undefined : [{ setupRequest: options.setupRequest as autocannon.Request['setupRequest'] }];
  return autocannon({
    url: `${options.url}${options.path}`,
    headers: options.headers,
    connections: options.connections ?? 100,
    pipelining: options.pipelining ?? 10,
    duration: seconds,
    requests,
  });
}

export async function measure(options: LoadOptions): Promise<LoadResult> {
  if (options.warmupSeconds > 0) await once(options, options.warmupSeconds);
  const before = snapshot(options.pids ?? []);
  const result = await once(options, options.seconds);
  const after = snapshot(options.pids ?? []);
  const foreignCpu = foreignShare(before, after);
  const cores = coresUsed(before, after);
  const total = result.requests.total;
  return {
    reqPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total,
    non2xx: result.non2xx,
    errors: result.errors,
    bytesPerResponse: total > 0 ? Math.round(result.throughput.total / total) : 0,
    foreignCpu,
    generatorCores: cores.self,
    serverCores: cores.each,
  };
}
