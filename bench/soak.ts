// Scenario 5: resident memory of the real service under a random-key soak. Both caches are bounded
// small (16 MiB each) and the request keys are random canonical requests over a 5000-symbol
// synthetic universe (random symbols, lists, periods, counts, windows, adjustments), so the caches
// fill and evict for the whole run. RSS is sampled from /proc/<pid>/status of the child.
import { measure, type LoadResult } from './lib/load.ts';
import { sample, scrape } from './lib/metrics.ts';
import { BENCH_KEY, rssOf, startService } from './lib/processes.ts';

export interface SoakOptions {
  seconds: number;
  cacheBytes: number;
  /** Concurrent connections (no pipelining): cold requests cost tens of ms each. */
  connections: number;
  log: (line: string) => void;
}

interface HeapSample {
  heapUsed: number;
  external: number;
}

export interface SoakResult {
  cacheBytes: number;
  baselineRss: number;
  maxRss: number;
  /** Highest RSS in the first and the second half of the soak (flat memory: similar values). */
  firstHalfMax: number;
  secondHalfMax: number;
  finalRss: number;
  /** Highest V8 heap and external (Buffer) bytes seen while soaking, without forcing a GC. */
  maxHeapUsed: number;
  maxExternal: number;
  /** After the soak and two forced full GCs: what is really retained. */
  afterGc: { rss: number; heapUsed: number; external: number };
  /** The same, after the warm-up and before the soak. */
  baselineAfterGc: { heapUsed: number; external: number };
  cacheFill: { data: number; response: number };
  load: LoadResult;
  overhead: number;
  statuses: string;
}

const UNIVERSE = 5000;
const PERIODS = ['1m', '5m', '15m', '30m', '60m', '1d', '1d', '1d', '1w', '1M'];
const ADJUST = ['none', 'forward', 'backward', 'forward_additive', 'backward_additive'];
const YEAR_MS = 365 * 86_400_000;

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)];
const symbol = () => `SIM${String(1 + Math.floor(Math.random() * UNIVERSE)).padStart(4, '0')}.US`;

/** One random canonical request: 60 % klines (random window), 40 % quotes (1-20 symbols). */
export function randomPath(now = Date.now()): string {
  if (Math.random() < 0.4) {
    const list = Array.from({ length: 1 + Math.floor(Math.random() * 20) }, symbol);
    return `/v1/quotes?symbols=${list.join(',')}`;
  }
  let path = `/v1/klines?symbol=${symbol()}&period=${pick(PERIODS)}&count=${1 + Math.floor(Math.random() * 1000)}&adjust=${pick(ADJUST)}`;
  if (Math.random() < 0.3) {
    const end = now - Math.floor(Math.random() * 3 * YEAR_MS);
    path += `&start_time=${end - Math.floor(Math.random() * YEAR_MS)}&end_time=${end}`;
  }
  return path;
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const service = await startService({
    env: {
      MDQS__cache__dataMaxBytes: String(options.cacheBytes),
      MDQS__cache__responseMaxBytes: String(options.cacheBytes),
      MDQS__adapters__sim__syntheticUniverse: String(UNIVERSE),
    },
    probe: true,
  });
  try {
    const headers = { 'x-api-key': BENCH_KEY };
    // Warm-up: JIT the hot path and let the heap reach its working size before the baseline.
    await measure({ url: service.url, path: '/v1/quotes?symbols=600519.SH', headers, warmupSeconds: 0, seconds: 3 });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const baselineRss = rssOf(service.pid).rss;
    const baseUsage = await service.memory(true);
    const baselineAfterGc = { heapUsed: baseUsage.heapUsed, external: baseUsage.external };
    options.log(`  baseline RSS after warm-up ${mib(baselineRss)}; soaking ${options.seconds} s`);

    const samples: Array<{ t: number; rss: number }> = [];
    const heap: HeapSample[] = [];
    const started = performance.now();
    let tick = 0;
    const timer = setInterval(() => {
      samples.push({ t: performance.now() - started, rss: rssOf(service.pid).rss });
      if (tick++ % 5 === 0) void service.memory(false).then((m) => heap.push({ heapUsed: m.heapUsed, external: m.external }));
    }, 200);
    const statusCounts = new Map<number, number>();
    let load: LoadResult;
    try {
      load = await measure({
        url: service.url, path: '/v1/quotes?symbols=600519.SH', headers, warmupSeconds: 0, seconds: options.seconds,
        connections: options.connections, pipelining: 1,
        setupRequest: (request) => ({ ...request, path: randomPath() }),
      });
    } finally {
      clearInterval(timer);
    }
    samples.push({ t: performance.now() - started, rss: rssOf(service.pid).rss });
    const metrics = await scrape(service.url);
    const gcUsage = await service.memory(true);
    const afterGc = { rss: rssOf(service.pid).rss, heapUsed: gcUsage.heapUsed, external: gcUsage.external };
    for (const [key, value] of metrics) {
      const match = /^mdqs_http_requests_total\{.*status="(\d+)"/.exec(key);
      if (match !== null) statusCounts.set(Number(match[1]), (statusCounts.get(Number(match[1])) ?? 0) + value);
    }
    const half = (options.seconds * 1000) / 2;
    const maxOf = (list: typeof samples) => Math.max(0, ...list.map((s) => s.rss));
    const maxRss = Math.max(maxOf(samples), rssOf(service.pid).hwm);
    return {
      cacheBytes: options.cacheBytes,
      baselineRss,
      maxRss,
      firstHalfMax: maxOf(samples.filter((s) => s.t < half)),
      secondHalfMax: maxOf(samples.filter((s) => s.t >= half)),
      finalRss: samples[samples.length - 1].rss,
      maxHeapUsed: Math.max(0, ...heap.map((h) => h.heapUsed)),
      maxExternal: Math.max(0, ...heap.map((h) => h.external)),
      afterGc,
      baselineAfterGc,
      cacheFill: {
        data: sample(metrics, 'mdqs_cache_bytes', { layer: 'data' }),
        response: sample(metrics, 'mdqs_cache_bytes', { layer: 'response' }),
      },
      load,
      overhead: maxRss - baselineRss - 2 * options.cacheBytes,
      statuses: [...statusCounts].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(' '),
    };
  } finally {
    await service.stop();
  }
}

export function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}
