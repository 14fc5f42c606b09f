// Issue 30 item 3: the memory soak with the stream, the store, the formats and financials in its mix.
// The service is variant A's (bench/lib/random-key-soak.ts: `src/server.ts`, 5000-symbol sim
// universe, 16 + 16 MiB cache bounds, the candle store on a fresh SQLite file in a temp dir), the
// load bench/lib/mix-load.ts's: variant A's random-key quotes and klines, klines as Arrow/Parquet/
// CSV, windows of several years of daily bars read back from the store, the five financial
// statements (plain, latest, as_of, date ranges, some as CSV/Arrow/Parquet), and WebSocket stream
// clients that subscribe, swap symbols and reconnect throughout. Targets as variant A's:
//   peak RSS − baseline RSS − bounds left ≤ 150 MiB
//   retained after two forced full GCs (heap + external, end − baseline) ≤ bounds left + 20 MiB
// where "bounds left" is the bounds less what the caches already hold at the baseline (the
// warm-up below fills some of them; those bytes are in the baseline RSS already).
// with bounds = cache.dataMaxBytes (the memory tier) + cache.responseMaxBytes (the response cache)
// + the store's hot-block cache (src/store/candle-store.ts BLOCK_CACHE_BYTES, 16 MiB, not
// configurable): 48 MiB by default. Not counted, as in variant A: the sim's memos
// (adapters.sim.memoMaxBytes, 10 MiB), the calendar memos (4 MiB), SQLite's own page cache
// (its default, ~2 MiB per connection), the stream's per-connection send buffers (1 MiB cap each,
// drained by these clients).
//
// No market in session (the stream pushes only for symbols in session): the service's Date.now()
// is moved into the latest US session (bench/lib/shift-clock.ts preloaded; SOAK_MIX_CLOCK=real
// keeps the wall clock), and the requests' times move with it.
//
//   node bench/suites/memory-soak-mix.ts                    this checkout as `npm start` runs it: its node
//                                                           flags and variables (MALLOC_ARENA_MAX=2, …), as
//                                                           deploy/ runs it too; BENCHMARKS.md's item 3 runs
//   SOAK_START_FLAGS=0 node bench/suites/memory-soak-mix.ts  plain `node src/server.ts`, glibc's and V8's defaults
// The knobs of bench/suites/memory-soak.ts (SOAK_SECONDS 180, SOAK_CACHE_MIB 16, SOAK_UNIVERSE 5000,
// SOAK_CONNECTIONS 32, SOAK_ROOT, SOAK_NODE_ARGS (with SOAK_START_FLAGS=0), SOAK_ENV, SOAK_MALLOC_ARENA_MAX, SOAK_SMAPS, SOAK_JSON),
// plus SOAK_STREAM_CLIENTS (50), SOAK_STREAM_POOL (150 symbols: what the sim's default memo keeps
// ticking), SOAK_STORE_SYMBOLS (250), SOAK_STORE_YEARS (6), SOAK_FINANCIALS_SYMBOLS (the universe: the symbols
// financials draw from), SOAK_MIX_CLOCK (auto | real),
// SOAK_MIX_WEIGHTS (random,format,store,financials; default 35,15,25,25) and SOAK_MIX_WARM (seconds
// of the same mix on one connection and two stream clients before the baseline, default 5; 0 takes
// the baseline after the quote warm-up alone, as variant A does).
//
// Why the warm-up: the baseline is the service warm on every path the soak will load, so what is
// measured is growth under the load, not the one-time footprint of code first run after the
// baseline (apache-arrow for the Arrow and Parquet encoders, the candle-build
// worker thread, the store's statements, the stream's compressors). The suite prints that
// footprint (the after-GC RSS before and after the warm-up) beside the result.
import { fileURLToPath } from 'node:url';
import { mib, runSoak, soakNumber, soakRows, soakSettings } from '../lib/random-key-soak.ts';
import { runMix, sessionClockOffset, writeMixKeysFile, MIX_KINDS, type MixResult } from '../lib/mix-load.ts';
import { featuresOf } from '../lib/bench-keys.ts';
import { reportHeadlines } from '../lib/report.ts';
import { rssOf } from '../lib/processes.ts';
import { BLOCK_CACHE_BYTES } from '../../src/store/candle-store.ts';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';

const MIB = 1048576;
const SHIFT_CLOCK = fileURLToPath(new URL('../lib/shift-clock.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const num = soakNumber;
// Measured as shipped (npm start, deploy/mdqs.service and the Kubernetes manifest all set these).
const { seconds, cacheBytes, root, nodeArgs, env } = soakSettings(true);
const universe = num('SOAK_UNIVERSE', 5000);
const connections = num('SOAK_CONNECTIONS', 32);

const [wRandom, wFormat, wStore, wFinancials] = (process.env.SOAK_MIX_WEIGHTS ?? '35,15,25,25').split(',').map(Number);
// Server start, warm-up and the two after-GC readings besides the soak itself.
const clockOffsetMs = process.env.SOAK_MIX_CLOCK === 'real' ? 0 : sessionClockOffset('US', seconds * 1000 + 10 * 60_000);
// The after-GC readings use V8's last-resort collection, which also gives back the pages V8 keeps
// pooled after a GC: the baseline is then what the warm service holds, not the warm-up's
// high-water mark (a stricter baseline: lower by the pool).
env.MDQS_PROBE_GC ??= 'last-resort';
const keysFile = writeMixKeysFile(await featuresOf(root ?? ROOT));
env.KEYS_FILE = keysFile;
const serviceArgs = [...nodeArgs];
if (clockOffsetMs !== 0) {
  env.MDQS_BENCH_CLOCK_OFFSET_MS = String(clockOffsetMs);
  serviceArgs.push('--import', SHIFT_CLOCK);
}
const mixOptions = {
  universe, connections,
  streamClients: num('SOAK_STREAM_CLIENTS', 50),
  streamPool: num('SOAK_STREAM_POOL', 150),
  storeSymbols: num('SOAK_STORE_SYMBOLS', 250),
  storeYears: num('SOAK_STORE_YEARS', 6),
  financialsSymbols: num('SOAK_FINANCIALS_SYMBOLS', universe),
  clockOffsetMs,
  weights: { random: wRandom, format: wFormat, store: wStore, financials: wFinancials },
};
const bounds = 2 * cacheBytes + BLOCK_CACHE_BYTES;
const warmSeconds = num('SOAK_MIX_WARM', 5);
/** The after-GC RSS before the warm-up (the quote-only baseline), when there is a warm-up. */
let coldRss: number | undefined;
const log = (line: string) => process.stdout.write(`${line}\n`);

log(`mixed soak: ${root ?? 'this checkout'}, node flags [${nodeArgs.join(' ')}]${Object.keys(env).length > 0 ? `, env ${Object.entries(env).filter(([k]) => k !== 'KEYS_FILE').map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}, ${seconds} s`);
log(`  bounds ${mib(bounds)} = data ${mib(cacheBytes)} + response ${mib(cacheBytes)} + store block cache ${mib(BLOCK_CACHE_BYTES)}; service clock ${clockOffsetMs === 0 ? 'the wall clock' : `${new Date(Date.now() + clockOffsetMs).toISOString()} (wall ${(clockOffsetMs / 3_600_000).toFixed(2)} h)`}`);
log(`  HTTP ${connections} connections, weights random ${wRandom} / format ${wFormat} / store ${wStore} / financials ${wFinancials}; ${mixOptions.streamClients} stream clients on ${mixOptions.streamPool} symbols; ${mixOptions.storeSymbols} store symbols × ${mixOptions.storeYears} years of 1d; financials over ${Math.min(universe, mixOptions.financialsSymbols)} symbols`);

let mix: MixResult | undefined;
let s: Awaited<ReturnType<typeof runSoak>>;
try {
  s = await runSoak(
    { name: 'mix', universe, cacheBytes, root, nodeArgs: serviceArgs, env },
    {
      seconds, connections, log,
      warm: warmSeconds <= 0 ? undefined : async (service) => {
        const before = await service.memory(true);
        coldRss = rssOf(service.pid).rss;
        const warm = await runMix(service, warmSeconds, { ...mixOptions, connections: 1, streamClients: 2 });
        const after = await service.memory(true);
        const served = [...warm.kinds].map(([kind, k]) => `${kind} ${k.requests}`).join(', ');
        log(`  warm-up, one at a time for ${warmSeconds} s (${served}; stream frames ${[...warm.stream.frames.values()].reduce((a, b) => a + b, 0)}): after-GC RSS ${mib(before.rss)} → ${mib(after.rss)} (heap ${mib(before.heapUsed)} → ${mib(after.heapUsed)}, external ${mib(before.external)} → ${mib(after.external)})`);
      },
      load: async (service, secs) => {
        mix = await runMix(service, secs, mixOptions);
        return mix.load;
      },
    },
  );
} finally {
  rmSync(dirname(keysFile), { recursive: true, force: true });
}
const m = mix!;
const { rows, over, retainedGrowth, free } = soakRows(s, bounds, {
  statuses: 'req/s (statuses, all routes from /metrics)', bounds: `${mib(bounds)}; `, caches: 'caches account at the end (data + response)', storeBlocksInBounds: true,
});
if (coldRss !== undefined) {
  // The same peak against the quote-only baseline (variant A's), the warm-up's footprint included.
  const coldOver = s.maxRss - coldRss - bounds;
  rows.push([`peak − the quote-only baseline (${mib(coldRss)}) − bounds: the warm-up's one-time footprint counted as growth`, `${mib(coldOver)} ${coldOver <= 150 * MIB ? 'PASS' : 'FAIL'}`]);
}
const serverErrors = [...m.kinds.values()].reduce((n, k) => n + [...k.statuses].filter(([st]) => st >= 500).reduce((a, [, c]) => a + c, 0), 0);
const noAnswer = [...m.kinds.values()].reduce((n, k) => n + (k.statuses.get(0) ?? 0), 0);
for (const [k, v] of rows) log(`| ${k} | ${v} |`);

const pct = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
log('');
log('| kind | requests | statuses (0 = no answer) | p50 / p99 ms | MiB received |');
log('|---|---|---|---|---|');
for (const kind of MIX_KINDS) {
  const k = m.kinds.get(kind)!;
  const statuses = [...k.statuses].sort((a, b) => a[0] - b[0]).map(([st, n]) => `${st}×${n}`).join(' ') || '–';
  log(`| ${kind} | ${k.requests} | ${statuses} | ${pct(k.latenciesMs, 50).toFixed(0)} / ${pct(k.latenciesMs, 99).toFixed(0)} | ${(k.bytes / MIB).toFixed(1)} |`);
}
log('');
const frames = [...m.stream.frames].sort((a, b) => b[1] - a[1]).map(([op, n]) => `${op} ${n}`).join(', ') || 'none';
const closes = [...m.stream.unexpectedCloses].map(([code, n]) => `${code}×${n}`).join(' ') || 'none';
const streamRows: Array<[string, string]> = [
  ['5xx answers (no 5xx expected); requests without an answer', `${serverErrors} ${serverErrors === 0 ? 'PASS' : 'FAIL'}; ${noAnswer}`],
  ['stream: clients, connections opened (reconnects), failed handshakes', `${mixOptions.streamClients}, ${m.stream.connects} (${m.stream.reconnects}), ${m.stream.failedHandshakes}`],
  ['stream: subscribe / unsubscribe messages sent; peak connections, subscriptions (/metrics)', `${m.stream.subscribes} / ${m.stream.unsubscribes}; ${m.stream.peakConnections}, ${m.stream.peakSubscriptions}`],
  ['stream: frames received by op; MiB (inflated)', `${frames}; ${(m.stream.bytes / MIB).toFixed(1)}`],
  ['stream: closes not asked for; server frames sent, conflations, slow-client closes', `${closes}; ${m.server.wsFramesSent}, ${m.server.wsConflations}, ${m.server.wsSlowCloses}`],
  ['store: bars served from the store / from the vendor; fill calls; store errors; corrupt blocks', `${m.server.storeBars} / ${m.server.upstreamBars}; ${m.server.fills}; ${m.server.storeErrors}; ${m.server.corrupt}`],
];
for (const [k, v] of streamRows) log(`| ${k} | ${v} |`);
for (const kind of MIX_KINDS) for (const line of m.kinds.get(kind)!.serverErrorSamples) log(`  ${kind}: ${line}`);
for (const line of m.stream.errorSamples) log(`  stream error frame: ${line}`);

reportHeadlines([
  { suite: 'memory soak (mix)', figure: `peak RSS − warm baseline − bounds left (${mib(free)} of ${mib(bounds)}, ${seconds} s, ${s.load.reqPerSec.toFixed(0)} req/s, ${mixOptions.streamClients} stream clients)`, value: mib(over), target: '≤ 150 MiB', pass: over <= 150 * MIB },
  { suite: 'memory soak (mix)', figure: 'retained growth after GC (heap + external)', value: mib(retainedGrowth), target: `≤ ${mib(free + 20 * MIB)}`, pass: retainedGrowth <= free + 20 * MIB },
  { suite: 'memory soak (mix)', figure: '5xx answers', value: String(serverErrors), target: '0', pass: serverErrors === 0 },
]);
if (process.env.SOAK_JSON) {
  const kinds = Object.fromEntries([...m.kinds].map(([kind, k]) => [kind, { requests: k.requests, statuses: Object.fromEntries(k.statuses), bytes: k.bytes }]));
  process.stdout.write(`${JSON.stringify({ ...s, nodeArgs: serviceArgs, root, bounds, over, retainedGrowth, kinds, stream: { ...m.stream, frames: Object.fromEntries(m.stream.frames), unexpectedCloses: Object.fromEntries(m.stream.unexpectedCloses) }, server: m.server })}\n`);
}
