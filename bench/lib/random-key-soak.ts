// Scenario 5: resident memory of the real service under a random-key soak. Both caches are bounded
// small and the request keys are random canonical requests over a synthetic universe (random
// symbols, lists, periods, counts, windows, adjustments), so the caches fill and evict for the
// whole run. RSS is sampled from /proc/<pid>/status of the child; a preloaded probe
// (lib/probe.ts) reads process.memoryUsage() after a forced full GC at the baseline and at the
// end, so what the process retains can be told apart from garbage V8 has not collected yet.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { measure, type LoadResult } from './load.ts';
import { sample, scrape, type Samples } from './metrics.ts';
import type { ProbeUsage } from './probe.ts';
import { BENCH_KEY, rssOf, startScriptSettings, startService, type ServiceChild } from './processes.ts';
import { QUICK } from './report.ts';

export interface SoakVariant {
  name: string;
  universe: number;
  /** Bytes for each of cache.dataMaxBytes and cache.responseMaxBytes. */
  cacheBytes: number;
  /**
   * Run bench/servers/soak-server.ts instead of src/server.ts: the same service, with the sim adapter's own
   * memos filled before it listens, so only the service can grow during the soak.
   */
  primedSim?: boolean;
  /** Another checkout to run (bench/suites/memory-soak.ts: the commit before a change). */
  root?: string;
  /** Extra node flags for the service, e.g. the V8 heap flags under test. */
  nodeArgs?: string[];
  /** Extra environment for the service (e.g. MALLOC_ARENA_MAX). */
  env?: Record<string, string>;
}

export interface SoakOptions {
  seconds: number;
  /** Concurrent connections (no pipelining): cold requests cost tens of ms each. */
  connections: number;
  log: (line: string) => void;
  /**
   * The load instead of the random-key autocannon round (bench/lib/mix-load.ts: the mixed soak of
   * issue 30, with the stream, the store, the formats and financials); it runs between the baseline
   * and the end reading, for `seconds`. Unset (variant A): the random-key requests of randomPath().
   */
  load?: (service: ServiceChild, seconds: number) => Promise<LoadResult>;
  /**
   * Run after the quote warm-up and before the baseline (the mixed soak: every kind of its load
   * served a few times, one at a time), so the baseline is the service warm on every path it will
   * serve and its code, encoders and worker are not counted as growth.
   */
  warm?: (service: ServiceChild) => Promise<void>;
}

interface Retained {
  rss: number;
  heapUsed: number;
  /** V8 heap of the main isolate, committed (garbage and free space included). */
  heapTotal: number;
  external: number;
  /** The candle-build worker's V8 heap, committed (0 when it is not running). */
  workerHeapTotal: number;
  /** Threads of the process (libuv pool, V8 platform, the candle-build worker once started). */
  threads: number;
  /** RSS split as /proc reports it: anonymous memory, and file-backed pages (the node binary, mapped files). */
  rssAnon: number;
  rssFile: number;
  /** Bytes the two caches account for (their own size estimates, from /metrics). */
  cacheBytes: number;
  /** Bytes the store's hot-block cache holds (mdqs_cache_bytes{layer="store_blocks"}; 0 without the store). */
  storeBlockBytes: number;
  dataCacheBytes: number;
  responseCacheBytes: number;
}

export interface SoakResult {
  variant: SoakVariant;
  baseline: Retained;
  end: Retained;
  /** Highest RSS sampled (every 200 ms) during the soak. */
  maxRss: number;
  /** Highest RSS in the first and the second half of the soak (flat memory: similar values). */
  firstHalfMax: number;
  secondHalfMax: number;
  /** Highest V8 heapUsed seen while soaking, without forcing a GC (garbage included). */
  maxHeapUsed: number;
  /** The probe's reading with the highest RSS (every 5th sample): what that RSS was made of. */
  peakUsage?: ProbeUsage;
  load: LoadResult;
  statuses: string;
}

const PERIODS = ['1m', '5m', '15m', '30m', '60m', '1d', '1d', '1d', '1w', '1M'];
const ADJUST = ['none', 'forward', 'backward', 'forward_additive', 'backward_additive'];
const YEAR_MS = 365 * 86_400_000;

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)];
const name = (n: number) => `SIM${String(n).padStart(4, '0')}.US`;

/** One random canonical request: 60 % klines (random window), 40 % quotes (1-20 symbols). */
export function randomPath(universe: number, now = Date.now()): string {
  const symbol = () => name(1 + Math.floor(Math.random() * universe));
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

function cacheBytesOf(metrics: Samples): { data: number; response: number; storeBlocks: number } {
  return {
    data: sample(metrics, 'mdqs_cache_bytes', { layer: 'data' }),
    response: sample(metrics, 'mdqs_cache_bytes', { layer: 'response' }),
    storeBlocks: sample(metrics, 'mdqs_cache_bytes', { layer: 'store_blocks' }),
  };
}

/** Wait until the service has answered everything it accepted (autocannon stops mid-flight). */
async function settle(service: ServiceChild): Promise<void> {
  const served = async () => {
    let total = 0;
    for (const [key, value] of await scrape(service.url)) if (key.startsWith('mdqs_http_requests_total{')) total += value;
    return total;
  };
  let last = -1;
  for (let i = 0; i < 50; i++) {
    const now = await served();
    if (now === last) return;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

async function retained(service: ServiceChild): Promise<Retained> {
  await settle(service);
  const cache = cacheBytesOf(await scrape(service.url));
  const usage: ProbeUsage = await service.memory(true);
  return {
    rss: rssOf(service.pid).rss, heapUsed: usage.heapUsed, heapTotal: usage.heapTotal, external: usage.external, workerHeapTotal: usage.workerHeapTotal ?? 0, threads: threadsOf(service.pid),
    rssAnon: statusField(service.pid, 'RssAnon') * 1024, rssFile: statusField(service.pid, 'RssFile') * 1024,
    cacheBytes: cache.data + cache.response, dataCacheBytes: cache.data, responseCacheBytes: cache.response, storeBlockBytes: cache.storeBlocks,
  };
}

/**
 * SOAK_SMAPS=1: resident memory by mapping kind (a developer's view of "the rest"). Anonymous
 * mappings that start on a 256 KiB boundary are V8's pages (every isolate's: main, the candle-build
 * worker, pooled; "V8 large" when not a multiple of 256 KiB long: large-object pages); glibc's
 * separately mapped chunks start on any 4 KiB page (one in 64 on a 256 KiB one), so "anon other"
 * is malloc's, give or take.
 */
function smapsSummary(pid: number): string {
  const groups = smapsRss(pid, (from, size, path) => {
    if (path !== '') return path.replace(/^.*\//, '');
    const v8 = from % 262144 === 0 ? (size % 262144 === 0 ? 'V8' : 'V8 large') : 'other';
    const band = size >= 64 * 1048576 ? '≥64M' : size >= 1048576 ? '1M-64M' : size >= 262144 ? '256K-1M' : '<256K';
    return `anon ${v8} ${band}`;
  });
  return [...groups].sort((a, b) => b[1].rss - a[1].rss).slice(0, 12).map(([name, g]) => `  smaps ${name}: ${mib(g.rss)} in ${g.count}`).join('\n');
}

/** Resident bytes (and mappings) of a process by group: `groupOf` names each mapping from its start, size and path ('' when anonymous). */
export function smapsRss(pid: number, groupOf: (from: number, size: number, path: string) => string): Map<string, { rss: number; count: number }> {
  const groups = new Map<string, { rss: number; count: number }>();
  let current = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head !== null) {
      const from = Number.parseInt(head[1], 16);
      current = groupOf(from, Number.parseInt(head[2], 16) - from, head[3]);
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss !== null) {
      const group = groups.get(current) ?? { rss: 0, count: 0 };
      group.rss += Number(rss[1]) * 1024;
      group.count += 1;
      groups.set(current, group);
    }
  }
  return groups;
}

function statusField(pid: number, name: string): number {
  const match = new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? 0 : Number(match[1]);
}

function threadsOf(pid: number): number {
  return statusField(pid, 'Threads');
}

/** Variant B's server in `root` (a checkout from before bench/ had folders keeps it at bench/servers/soak-server.ts). */
function soakServerEntry(root: string | undefined): string {
  const entry = 'bench/servers/soak-server.ts';
  return root === undefined || existsSync(join(root, entry)) ? entry : 'bench/servers/soak-server.ts';
}

export async function runSoak(variant: SoakVariant, options: SoakOptions): Promise<SoakResult> {
  const service = await startService({
    env: {
      MDQS__cache__dataMaxBytes: String(variant.cacheBytes),
      MDQS__cache__responseMaxBytes: String(variant.cacheBytes),
      MDQS__adapters__sim__syntheticUniverse: String(variant.universe),
      ...variant.env,
    },
    probe: true,
    entry: variant.primedSim === true ? soakServerEntry(variant.root) : undefined,
    root: variant.root,
    nodeArgs: variant.nodeArgs,
  });
  try {
    const headers = { 'x-api-key': BENCH_KEY };
    const smaps = process.env.SOAK_SMAPS === '1';
    // JIT the hot path and let the heap reach its working size before the baseline.
    await measure({ url: service.url, path: '/v1/quotes?symbols=600519.SH', headers, warmupSeconds: 0, seconds: 3 });
    await options.warm?.(service);
    const baseline = await retained(service);
    options.log(`  baseline: RSS ${mib(baseline.rss)}, after GC heap ${mib(baseline.heapUsed)} + external ${mib(baseline.external)}, caches hold ${mib(baseline.cacheBytes)}; soaking ${options.seconds} s`);

    const samples: Array<{ t: number; rss: number }> = [];
    const heap: number[] = [];
    let peakUsage: ProbeUsage | undefined;
    const started = performance.now();
    let tick = 0;
    let peakSmaps: { rss: number; at: number; text: string } | undefined;
    const timer = setInterval(() => {
      const rss = rssOf(service.pid).rss;
      samples.push({ t: performance.now() - started, rss });
      // The mappings at the highest RSS (a new high 5 MiB above the last one read, so a short
      // spike is caught without reading smaps on every sample).
      if (smaps && rss > (peakSmaps?.rss ?? 0) + 5 * 1048576) {
        peakSmaps = { rss, at: performance.now(), text: smapsSummary(service.pid) };
      }
      if (tick++ % 5 === 0) {
        void service.memory(false).then((m) => {
          heap.push(m.heapUsed);
          if (peakUsage === undefined || m.rss > peakUsage.rss) peakUsage = m;
        });
      }
    }, 200);
    let load: LoadResult;
    try {
      load = options.load !== undefined ? await options.load(service, options.seconds) : await measure({
        url: service.url, path: '/', headers, warmupSeconds: 0, seconds: options.seconds,
        connections: options.connections, pipelining: 1, pids: [service.pid],
        setupRequest: (request) => ({ ...request, path: randomPath(variant.universe) }),
      });
    } finally {
      clearInterval(timer);
    }
    samples.push({ t: performance.now() - started, rss: rssOf(service.pid).rss });
    const statusCounts = new Map<number, number>();
    for (const [key, value] of await scrape(service.url)) {
      const match = /^mdqs_http_requests_total\{.*status="(\d+)"/.exec(key);
      if (match !== null) statusCounts.set(Number(match[1]), (statusCounts.get(Number(match[1])) ?? 0) + value);
    }
    const end = await retained(service);
    if (peakSmaps !== undefined) options.log(`  at RSS ${mib(peakSmaps.rss)} during the soak:\n${peakSmaps.text}`);
    if (smaps) options.log(`  at the end, after GC (RSS ${mib(end.rss)}):\n${smapsSummary(service.pid)}`);
    const half = (options.seconds * 1000) / 2;
    const maxOf = (list: typeof samples) => Math.max(0, ...list.map((s) => s.rss));
    return {
      variant, baseline, end, load,
      maxRss: maxOf(samples),
      firstHalfMax: maxOf(samples.filter((s) => s.t < half)),
      secondHalfMax: maxOf(samples.filter((s) => s.t >= half)),
      maxHeapUsed: Math.max(0, ...heap),
      peakUsage,
      statuses: [...statusCounts].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(' '),
    };
  } catch (error) {
    const cause = (error as Error).cause instanceof Error ? ` (${((error as Error).cause as Error).message})` : '';
    throw new Error(`soak ${variant.name} failed: ${(error as Error).message}${cause}; service stderr:\n${service.stderr().slice(-2000)}`, { cause: error });
  } finally {
    await service.stop();
  }
}

export function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}

/**
 * The rows both memory soaks print (bench/suites/memory-soak.ts and memory-soak-mix.ts) against
 * their targets: peak RSS − baseline − `bounds` ≤ 150 MiB, retained growth ≤ bounds + 20 MiB.
 * `caches` names what the last row's two figures are.
 */
export function soakRows(s: SoakResult, bounds: number, labels: { statuses: string; bounds: string; caches: string; storeBlocksInBounds?: boolean }): {
  rows: Array<[string, string]>; over: number; retainedGrowth: number; free: number;
} {
  const MIB = 1048576;
  // What the bounded caches already held at the baseline is in the baseline: only the rest of the
  // bounds may still be added by them (0 held after a quote warm-up; the mixed soak's warm-up fills some).
  // (The store's hot blocks count only where the bounds include them: the mixed soak's.)
  const blocksHeld = labels.storeBlocksInBounds === true ? s.baseline.storeBlockBytes : 0;
  const held = Math.min(bounds, s.baseline.cacheBytes + blocksHeld);
  const free = bounds - held;
  const over = s.maxRss - s.baseline.rss - free;
  const retainedGrowth = s.end.heapUsed + s.end.external - s.baseline.heapUsed - s.baseline.external;
  const rows: Array<[string, string]> = [
    ['bounds held at the baseline (data + response + store blocks), so counted in it', `${mib(held)} (${mib(s.baseline.dataCacheBytes)} + ${mib(s.baseline.responseCacheBytes)} + ${mib(blocksHeld)}); bounds left ${mib(free)}`],
    [labels.statuses, `${s.load.reqPerSec.toFixed(1)} (${s.statuses})`],
    ['server CPU per request; other processes’ share of the machine', `${((1000 * (s.load.serverCores[0] ?? 0)) / Math.max(1e-9, s.load.reqPerSec)).toFixed(1)} ms; ${(100 * s.load.foreignCpu).toFixed(0)} %`],
    ['baseline RSS', mib(s.baseline.rss)],
    ['peak RSS (1st / 2nd half)', `${mib(s.maxRss)} (${mib(s.firstHalfMax)} / ${mib(s.secondHalfMax)})`],
    [`peak − baseline − bounds left (${labels.bounds}≤ 150 MiB)`, `${mib(over)} ${over <= 150 * MIB ? 'PASS' : 'FAIL'}`],
    ['RSS at the end, after GC (main heap committed; threads)', `${mib(s.end.rss)} (${mib(s.end.heapTotal)}; ${s.end.threads})`],
    ['RSS anonymous + file-backed, baseline → end', `${mib(s.baseline.rssAnon)} + ${mib(s.baseline.rssFile)} → ${mib(s.end.rssAnon)} + ${mib(s.end.rssFile)}`],
    ['RSS outside the main heap and external, baseline → end', `${mib(s.baseline.rss - s.baseline.heapTotal - s.baseline.external)} → ${mib(s.end.rss - s.end.heapTotal - s.end.external)}`],
    ['peak heapUsed while soaking', mib(s.maxHeapUsed)],
    ...(s.peakUsage === undefined ? [] : [[
      'highest sampled RSS: main heap committed + external (array buffers) + the rest',
      `${mib(s.peakUsage.rss)} = ${mib(s.peakUsage.heapTotal)} + ${mib(s.peakUsage.external)} (${mib(s.peakUsage.arrayBuffers)}) + ${mib(s.peakUsage.rss - s.peakUsage.heapTotal - s.peakUsage.external)}`,
    ] as [string, string]]),
    ...(s.peakUsage === undefined ? [] : [[
      'at that sample: worker heap committed (used); main isolate malloced',
      `${mib(s.peakUsage.workerHeapTotal ?? 0)} (${mib(s.peakUsage.workerHeapUsed ?? 0)}); ${mib(s.peakUsage.mallocedMemory ?? 0)}`,
    ] as [string, string]]),
    ['worker heap committed, end', mib(s.end.workerHeapTotal)],
    ['after GC, baseline: heap + external', `${mib(s.baseline.heapUsed)} + ${mib(s.baseline.external)}`],
    ['after GC, end: heap + external', `${mib(s.end.heapUsed)} + ${mib(s.end.external)}`],
    [`retained growth (≤ bounds left + 20 MiB = ${mib(free + 20 * MIB)})`, `${mib(retainedGrowth)} ${retainedGrowth <= free + 20 * MIB ? 'PASS' : 'FAIL'}`],
    [labels.caches, `${mib(s.end.dataCacheBytes)} + ${mib(s.end.responseCacheBytes)}`],
  ];
  return { rows, over, retainedGrowth, free };
}

/** A number from the environment (unset or empty: `fallback`). */
export function soakNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? fallback : Number(raw);
}

/**
 * The settings the memory soaks read from the environment: SOAK_SECONDS (180; 15 quick),
 * SOAK_CACHE_MIB (16), SOAK_ROOT (another checkout), SOAK_START_FLAGS (1: npm start's flags and
 * variables, the checkout's own; 0: plain node; unset: `startFlagsByDefault`), SOAK_NODE_ARGS (the
 * node flags when npm start's are not used), SOAK_ENV (K=V …, wins over the start script's
 * variables), SOAK_MALLOC_ARENA_MAX.
 */
export function soakSettings(startFlagsByDefault = false): { seconds: number; cacheBytes: number; root?: string; nodeArgs: string[]; env: Record<string, string> } {
  const root = process.env.SOAK_ROOT || undefined;
  const startFlags = process.env.SOAK_START_FLAGS === undefined || process.env.SOAK_START_FLAGS === '' ? startFlagsByDefault : process.env.SOAK_START_FLAGS === '1';
  const start = startFlags ? startScriptSettings(root) : undefined;
  const nodeArgs = start?.flags ?? (process.env.SOAK_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const env: Record<string, string> = Object.fromEntries((process.env.SOAK_ENV ?? '').split(/\s+/).filter(Boolean).map((pair) => {
    const at = pair.indexOf('=');
    return [pair.slice(0, at), pair.slice(at + 1)];
  }));
  if (process.env.SOAK_MALLOC_ARENA_MAX) env.MALLOC_ARENA_MAX = process.env.SOAK_MALLOC_ARENA_MAX;
  for (const [k, v] of Object.entries(start?.env ?? {})) env[k] ??= v;
  return { seconds: soakNumber('SOAK_SECONDS', QUICK ? 15 : 180), cacheBytes: soakNumber('SOAK_CACHE_MIB', 16) * 1048576, root, nodeArgs, env };
}
