// Issue 30 item 3: the one-time footprint of each path the mixed soak loads, path by path. The
// service is the mixed soak's (bench/lib/random-key-soak.ts settings, npm start's flags and
// variables, the candle store on a fresh SQLite file); after the quote warm-up it serves one kind
// of the mix at a time, one connection, for a few seconds each, and after each step reads the
// after-GC memory (V8's last-resort GC, as the soak's baseline): RSS, the main heap (used,
// committed), external, the worker heaps, and the RSS that is none of those, with smaps by mapping
// kind at the end. What a step adds is that path's first-use footprint plus whatever its caches
// now hold (listed).
//
//   node bench/diagnostics/first-use.ts [seconds a step, default 4]
//   FIRST_USE_STEPS=format,store,financials,stream,random   the order (default)
// The knobs of bench/suites/memory-soak-mix.ts that apply: SOAK_UNIVERSE, SOAK_CACHE_MIB, SOAK_ROOT,
// SOAK_NODE_ARGS / SOAK_ENV (with SOAK_START_FLAGS=0 the flags are not npm start's).
import { readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { featuresOf } from '../lib/bench-keys.ts';
import { measure } from '../lib/load.ts';
import { sample, scrape } from '../lib/metrics.ts';
import { runMix, sessionClockOffset, writeMixKeysFile, type MixOptions } from '../lib/mix-load.ts';
import type { ProbeUsage } from '../lib/probe.ts';
import { BENCH_KEY, rssOf, startService } from '../lib/processes.ts';
import { mib, smapsRss, soakNumber, soakSettings } from '../lib/random-key-soak.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SHIFT_CLOCK = fileURLToPath(new URL('../lib/shift-clock.ts', import.meta.url));
const stepSeconds = Number(process.argv[2] ?? 4);
const steps = (process.env.FIRST_USE_STEPS ?? 'format,store,financials,stream,random').split(',');
const { cacheBytes, root, nodeArgs, env } = soakSettings(true);
const universe = soakNumber('SOAK_UNIVERSE', 5000);
const clockOffsetMs = sessionClockOffset('US', 30 * 60_000);
env.MDQS_PROBE_GC ??= 'last-resort';
const keysFile = writeMixKeysFile(await featuresOf(root ?? ROOT));
env.KEYS_FILE = keysFile;
env.MDQS_BENCH_CLOCK_OFFSET_MS = String(clockOffsetMs);

const base: MixOptions = {
  universe, connections: 1, streamClients: 0, streamPool: 150, storeSymbols: 250, storeYears: 6,
  financialsSymbols: universe, clockOffsetMs, weights: { random: 0, format: 0, store: 0, financials: 0 },
};
const kindOptions: Record<string, Partial<MixOptions>> = {
  random: { weights: { random: 1, format: 0, store: 0, financials: 0 } },
  format: { weights: { random: 0, format: 1, store: 0, financials: 0 } },
  store: { weights: { random: 0, format: 0, store: 1, financials: 0 } },
  financials: { weights: { random: 0, format: 0, store: 0, financials: 1 } },
  // Two stream clients, and a trickle of quotes so the HTTP loop has something to do.
  stream: { streamClients: 2, weights: { random: 1, format: 0, store: 0, financials: 0 }, universe: 20 },
};

const service = await startService({
  env: {
    MDQS__cache__dataMaxBytes: String(cacheBytes), MDQS__cache__responseMaxBytes: String(cacheBytes),
    MDQS__adapters__sim__syntheticUniverse: String(universe), ...env,
  },
  probe: true, root, nodeArgs: [...nodeArgs, '--import', SHIFT_CLOCK],
});

function smaps(pid: number): Map<string, number> {
  const groups = smapsRss(pid, (from, size, path) => (path !== '' ? path.replace(/^.*\//, '') : from % 262144 === 0 && size % 262144 === 0 ? 'anon V8-aligned' : 'anon other'));
  return new Map([...groups].map(([name, g]) => [name, g.rss]));
}

interface Reading { step: string; rss: number; heapUsed: number; heapTotal: number; external: number; workers: number; workerHeap: number; caches: number; threads: number; smaps: Map<string, number> }

async function read(step: string): Promise<Reading> {
  await new Promise((resolve) => setTimeout(resolve, 500));
  const m = await scrape(service.url);
  const caches = sample(m, 'mdqs_cache_bytes', { layer: 'data' }) + sample(m, 'mdqs_cache_bytes', { layer: 'response' }) + sample(m, 'mdqs_cache_bytes', { layer: 'store_blocks' });
  const u = (await service.memory(true)) as ProbeUsage;
  const threads = Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${service.pid}/status`, 'utf8'))?.[1] ?? 0);
  return { step, rss: rssOf(service.pid).rss, heapUsed: u.heapUsed, heapTotal: u.heapTotal, external: u.external, workers: u.workers ?? 0, workerHeap: u.workerHeapTotal ?? 0, caches, threads, smaps: smaps(service.pid) };
}

const readings: Reading[] = [];
try {
  readings.push(await read('started'));
  await measure({ url: service.url, path: '/v1/quotes?symbols=600519.SH', headers: { 'x-api-key': BENCH_KEY }, warmupSeconds: 0, seconds: 3 });
  readings.push(await read('quote warm-up (the soak\'s quote-only baseline)'));
  for (const step of steps) {
    const options = { ...base, ...kindOptions[step] };
    if (kindOptions[step] === undefined) throw new Error(`unknown step ${step}`);
    const r = await runMix(service, stepSeconds, options);
    const served = [...r.kinds].filter(([, k]) => k.requests > 0).map(([kind, k]) => `${kind} ${k.requests}`).join(', ');
    readings.push(await read(`${step} (${served}${options.streamClients > 0 ? `; ${r.stream.connects} stream connections` : ''})`));
  }
} finally {
  await service.stop();
  rmSync(dirname(keysFile), { recursive: true, force: true });
}

const d = (a: number, b: number) => `${b - a >= 0 ? '+' : ''}${((b - a) / 1048576).toFixed(1)}`;
const out = (line: string) => process.stdout.write(`${line}\n`);
out(`first use, path by path: ${root ?? 'this checkout'}, flags [${nodeArgs.join(' ')}], ${stepSeconds} s a step, one connection; after-GC (last-resort) readings, MiB`);
out('| after | RSS | Δ RSS | Δ heap used | Δ heap committed | Δ external | Δ worker heaps (workers) | Δ the rest | Δ caches | threads |');
out('|---|---|---|---|---|---|---|---|---|---|');
for (let i = 0; i < readings.length; i++) {
  const r = readings[i];
  const p = readings[Math.max(0, i - 1)];
  const rest = (x: Reading) => x.rss - x.heapTotal - x.external - x.workerHeap;
  out(`| ${r.step} | ${mib(r.rss)} | ${d(p.rss, r.rss)} | ${d(p.heapUsed, r.heapUsed)} | ${d(p.heapTotal, r.heapTotal)} | ${d(p.external, r.external)} | ${d(p.workerHeap, r.workerHeap)} (${r.workers}) | ${d(rest(p), rest(r))} | ${d(p.caches, r.caches)} | ${r.threads} |`);
}
const first = readings[1];
const last = readings[readings.length - 1];
out('');
out(`smaps, after the quote warm-up → at the end (RSS by mapping, MiB; largest changes):`);
const names = new Set([...first.smaps.keys(), ...last.smaps.keys()]);
const changes = [...names].map((n) => [n, first.smaps.get(n) ?? 0, last.smaps.get(n) ?? 0] as const).sort((a, b) => Math.abs(b[2] - b[1]) - Math.abs(a[2] - a[1])).slice(0, 10);
for (const [n, a, b] of changes) out(`  ${n}: ${mib(a)} → ${mib(b)} (${d(a, b)})`);
