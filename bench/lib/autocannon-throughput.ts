// Scenarios 1 and 2: cache-hit throughput of the real service next to a bare node:http server that
// sends the identical bytes. Rounds alternate between the two (bare, service, service, bare, …)
// on the same machine in the same run; the reported ratio is the median of the per-pair ratios.
import { captureHit, header } from './capture.ts';
import { measure, type LoadResult } from './load.ts';
import { responseHitShare, scrape } from './metrics.ts';
import { BENCH_KEY, startBare, type Child } from './processes.ts';

export interface ThroughputScenario {
  name: string;
  path: string;
  /** Metrics resource label of the route, for the hit share. */
  resource: string;
  target: number;
}

export interface ThroughputOptions {
  /** Quiet pairs wanted; noisy pairs are repeated, up to 2 × pairs attempts in all. */
  pairs: number;
  /** A round is noisy when other processes used more than this share of the machine. */
  maxForeignCpu: number;
  warmupSeconds: number;
  seconds: number;
  log: (line: string) => void;
}

export interface ThroughputResult {
  scenario: ThroughputScenario;
  bodyBytes: number;
  rounds: Array<{ bare: LoadResult; service: LoadResult; ratio: number; cpuRatio: number; quiet: boolean }>;
  /** Median over the quiet pairs, or over every pair when fewer than 2 were quiet (`noisy`). */
  ratio: number;
  /**
   * The same per server CPU second: (service req/s ÷ its cores) ÷ (bare req/s ÷ its cores). When
   * autocannon saturates its core the req/s ratio drifts to 1 whatever the servers cost; this not.
   */
  cpuRatio: number;
  /** Rounds in which autocannon, not the server, was the bottleneck (it used ≥ 0.95 core). */
  generatorBound: number;
  noisy: boolean;
  service: LoadResult;
  bare: LoadResult;
  hits: number;
  misses: number;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function check(name: string, result: LoadResult): void {
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${name}: ${result.non2xx} non-2xx responses and ${result.errors} errors in the measured round`);
  }
}

export async function runThroughput(service: Child, scenario: ThroughputScenario, options: ThroughputOptions): Promise<ThroughputResult> {
  const headers = { 'x-api-key': BENCH_KEY };
  const captured = await captureHit(`${service.url}${scenario.path}`, headers);
  options.log(`  captured ${captured.body.length} B body, etag ${header(captured, 'etag')}; starting the bare server`);
  const bare = await startBare(captured);
  const rounds: ThroughputResult['rounds'] = [];
  const before = await scrape(service.url);
  const pct = (share: number) => `${(100 * share).toFixed(0)} %`;
  try {
    const load = { path: scenario.path, headers, warmupSeconds: options.warmupSeconds, seconds: options.seconds, pids: [service.pid, bare.pid] };
    // A fresh process is slower for its first seconds (JIT, socket buffers): warm both once, longer.
    await measure({ ...load, url: bare.url, warmupSeconds: 0, seconds: Math.max(4, 2 * options.warmupSeconds) });
    await measure({ ...load, url: service.url, warmupSeconds: 0, seconds: Math.max(4, 2 * options.warmupSeconds) });
    for (let attempt = 1; attempt <= 2 * options.pairs && rounds.filter((r) => r.quiet).length < options.pairs; attempt++) {
      // ABBA order (bare first, then service first, …) so a drift over the run cancels out.
      const bareFirst = attempt % 2 === 1;
      const first = await measure({ ...load, url: bareFirst ? bare.url : service.url });
      const second = await measure({ ...load, url: bareFirst ? service.url : bare.url });
      const [bareResult, serviceResult] = bareFirst ? [first, second] : [second, first];
      check('bare', bareResult);
      check('service', serviceResult);
      const ratio = serviceResult.reqPerSec / bareResult.reqPerSec;
      const quiet = Math.max(bareResult.foreignCpu, serviceResult.foreignCpu) <= options.maxForeignCpu;
      const perCore = (r: LoadResult, server: number) => r.reqPerSec / Math.max(0.01, r.serverCores[server]);
      const cpuRatio = perCore(serviceResult, 0) / perCore(bareResult, 1);
      rounds.push({ bare: bareResult, service: serviceResult, ratio, cpuRatio, quiet });
      if (attempt === 1) options.log(`  bytes per response (headers + body, from autocannon): bare ${bareResult.bytesPerResponse}, service ${serviceResult.bytesPerResponse}`);
      // pids are [service, bare]: each round reports the cores its own server and autocannon used.
      const cores = (r: LoadResult, server: number) => `${r.serverCores[server].toFixed(2)} server + ${r.generatorCores.toFixed(2)} autocannon cores`;
      options.log(`  pair ${attempt} (${bareFirst ? 'bare first' : 'service first'}): bare ${Math.round(bareResult.reqPerSec)} req/s (${cores(bareResult, 1)}), service ${Math.round(serviceResult.reqPerSec)} req/s (${cores(serviceResult, 0)}), ratio ${ratio.toFixed(3)}, per server CPU ${cpuRatio.toFixed(3)}; other processes used ${pct(bareResult.foreignCpu)} / ${pct(serviceResult.foreignCpu)} of the CPU${quiet ? '' : ' (noisy, repeated)'}`);
    }
  } finally {
    await bare.stop();
  }
  const { hits, misses } = responseHitShare(before, await scrape(service.url), scenario.resource);
  const quietRounds = rounds.filter((r) => r.quiet);
  const noisy = quietRounds.length < 2;
  const counted = noisy ? rounds : quietRounds;
  const ratio = median(counted.map((r) => r.ratio));
  const cpuRatio = median(counted.map((r) => r.cpuRatio));
  const generatorBound = counted.flatMap((r) => [r.bare, r.service]).filter((r) => r.generatorCores >= 0.95).length;
  // The pair whose ratio is the median (the upper one for an even count) supplies the raw figures.
  const representative = [...counted].sort((a, b) => a.ratio - b.ratio)[Math.floor(counted.length / 2)];
  return {
    scenario, bodyBytes: captured.body.length, rounds, ratio, cpuRatio, generatorBound, noisy,
    service: representative.service, bare: representative.bare, hits, misses,
  };
}
