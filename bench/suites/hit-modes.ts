// Cache hits against bare node:http in the four ways issue 30 asks them (deliverable 1): pinned
// and unpinned, on a quiet machine and beside a bounded CPU hog, in one run.
//
//   pinned     the service and bare on CPU 1, wrk on CPU 0 (taskset), as bench/suites/cache-hit.ts
//   unpinned   nothing pinned: the way an operator measures it (the issue's table)
//   quiet      nothing else of ours running (the foreign cores of every run are printed)
//   hog        `stress-ng --cpu 1` (Debian) beside them, or a node busy loop where stress-ng is
//              missing; bounded by its own timeout and killed at the end of the mode
//
// In each mode and scenario: the service started as `npm start` starts it (its node flags and
// environment, log level info, history store off as in the other hit suites) and a bare
// node:http server sending the service's captured bytes, both fresh processes; one warm-up run
// each, then BENCH_PAIRS alternated pairs (service then bare, bare then service…) of
// `wrk -t1 -c50 -d5s` (the issue's command). Per pair: req/s ÷ bare and bare's server CPU per
// request ÷ the service's (the cost ratio, steadier where other processes take the CPU); the
// figure judged is the median req/s ratio over the pairs, against quote ≥ 0.90, candles ≥ 0.92.
//
//   node bench/suites/hit-modes.ts      BENCH_PAIRS (5), BENCH_SECONDS (5), BENCH_CONNECTIONS (50),
//                                       BENCH_MODES (pinned-quiet,unpinned-quiet,pinned-hog,unpinned-hog),
//                                       BENCH_ONLY (quote | 1000), BENCH_LEVEL (info: the shipped level),
//                                       BENCH_NODE_FLAGS (added to npm start's node flags)
// ~10 min at the defaults; BENCH_QUICK=1 (1 pair of 1 s, the quiet modes) ~1 min, a smoke test.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { captureHit } from '../lib/capture.ts';
import { BENCH_KEY, startBare, startScriptSettings, startService, type Child } from '../lib/processes.ts';
import { envNumber, QUICK, reportHeadlines, type Headline } from '../lib/report.ts';
import { median } from '../lib/stats.ts';
import { table } from '../lib/table.ts';
import { ensureWrk, runWrk, type WrkResult } from '../lib/wrk.ts';

const PAIRS = envNumber('BENCH_PAIRS', 5, 1);
const SECONDS = envNumber('BENCH_SECONDS', 5, 1);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 50);
const MODES = (process.env.BENCH_MODES ?? (QUICK ? 'pinned-quiet,unpinned-quiet' : 'pinned-quiet,unpinned-quiet,pinned-hog,unpinned-hog'))
  .split(',').map((m) => m.trim()).filter(Boolean);
// The issue's requests: an A-share quote and 1000 daily candles of it.
const SCENARIOS = [
  { name: 'quote', path: '/v1/quotes?symbols=600519.SH', target: 0.9 },
  { name: '1000 daily candles', path: '/v1/klines?symbol=600519.SH&period=1d&count=1000', target: 0.92 },
].filter((s) => process.env.BENCH_ONLY === undefined || s.name.startsWith(process.env.BENCH_ONLY));
const LEVEL = process.env.BENCH_LEVEL ?? 'info';
const EXTRA_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
const headers = { 'x-api-key': BENCH_KEY };
const log = (line: string) => process.stdout.write(`${line}\n`);

for (const mode of MODES) {
  if (!/^(pinned|unpinned)-(quiet|hog)$/.test(mode)) throw new Error(`BENCH_MODES: unknown mode "${mode}" (pinned-quiet, unpinned-quiet, pinned-hog, unpinned-hog)`);
}
ensureWrk();

/** A CPU hog of one core, bounded by `seconds` whatever happens to this process. */
function startHog(seconds: number): { proc: ChildProcess; what: string } {
  if (spawnSync('stress-ng', ['--version']).error === undefined) {
    return { proc: spawn('stress-ng', ['--cpu', '1', '--timeout', `${seconds}s`, '--quiet'], { stdio: 'ignore' }), what: 'stress-ng --cpu 1' };
  }
  const loop = `const end = Date.now() + ${seconds * 1000}; while (Date.now() < end) {}`;
  return { proc: spawn(process.execPath, ['-e', loop], { stdio: 'ignore' }), what: 'a node busy loop (stress-ng not installed)' };
}

async function stopHog(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  await exited;
}

interface Pair { service: WrkResult; bare: WrkResult }
interface Outcome { mode: string; scenario: (typeof SCENARIOS)[number]; pairs: Pair[]; hog?: string }

const { flags, env } = startScriptSettings();
const outcomes: Outcome[] = [];

for (const mode of MODES) {
  const [pinning, load] = mode.split('-');
  // bench/lib/processes.ts pinned() and bench/lib/wrk.ts read it when they spawn.
  process.env.BENCH_PIN = pinning === 'pinned' ? '1' : '0';
  for (const scenario of SCENARIOS) {
    const service = await startService({ nodeArgs: [...flags, ...EXTRA_FLAGS], env: { ...env, LOG_LEVEL: LEVEL, MDQS__history__enabled: 'false' } });
    let bare: Child | undefined;
    let hog: ReturnType<typeof startHog> | undefined;
    const pairs: Pair[] = [];
    try {
      const hit = await captureHit(`${service.url}${scenario.path}`, headers);
      bare = await startBare(hit);
      // Bounded: the whole mode's runs and a margin.
      if (load === 'hog') hog = startHog((2 + 2 * PAIRS) * (SECONDS + 2) + 30);
      const run = (target: Child) => runWrk(`${target.url}${scenario.path}`, { seconds: SECONDS, connections: CONNECTIONS, pipeline: 1, headers, serverPid: target.pid });
      // Warm-up: the JIT of both, the service's caches.
      await run(service);
      await run(bare);
      for (let p = 0; p < PAIRS; p++) {
        if (p % 2 === 0) {
          const s = await run(service);
          pairs.push({ service: s, bare: await run(bare) });
        } else {
          const b = await run(bare);
          pairs.push({ service: await run(service), bare: b });
        }
        const last = pairs[pairs.length - 1];
        for (const [side, r] of [['service', last.service], ['bare', last.bare]] as const) {
          if (r.non2xx > 0 || r.errors > 0) throw new Error(`${mode} ${scenario.name}: ${side} answered ${r.non2xx} non-2xx and ${r.errors} socket errors`);
        }
        log(`${mode.padEnd(15)} ${scenario.name.padEnd(19)} pair ${p + 1}: ${(last.service.requestsPerSecond / last.bare.requestsPerSecond).toFixed(2)}`);
      }
    } finally {
      if (hog !== undefined) await stopHog(hog.proc);
      await bare?.stop();
      await service.stop();
    }
    outcomes.push({ mode, scenario, pairs, hog: hog?.what });
  }
}

const ratio = (p: Pair) => p.service.requestsPerSecond / p.bare.requestsPerSecond;
const cost = (p: Pair) => p.bare.serverCpuUs / p.service.serverCpuUs;
log(`\nwrk -t1 -c${CONNECTIONS} -d${SECONDS}s, ${PAIRS} alternated pairs per row, service as \`npm start\` starts it at ${LEVEL}${EXTRA_FLAGS.length > 0 ? ` with ${EXTRA_FLAGS.join(' ')}` : ''}\n`);
log(table(
  ['mode', 'hit', 'service ÷ bare req/s, each pair', 'median', 'target', 'bare CPU ÷ service CPU per request (median)', 'service / bare req/s (median)', 'foreign cores (range)', 'wrk cores (max)'],
  outcomes.map((o) => {
    const foreign = o.pairs.flatMap((p) => [p.service.foreignCores, p.bare.foreignCores]);
    return [
      o.mode + (o.hog === undefined ? '' : ` (${o.hog})`),
      o.scenario.name,
      o.pairs.map((p) => ratio(p).toFixed(2)).join(', '),
      median(o.pairs.map(ratio)).toFixed(2),
      `≥ ${o.scenario.target.toFixed(2)} ${median(o.pairs.map(ratio)) >= o.scenario.target ? 'met' : 'MISSED'}`,
      median(o.pairs.map(cost)).toFixed(2),
      `${median(o.pairs.map((p) => p.service.requestsPerSecond)).toFixed(0)} / ${median(o.pairs.map((p) => p.bare.requestsPerSecond)).toFixed(0)}`,
      `${Math.min(...foreign).toFixed(2)}–${Math.max(...foreign).toFixed(2)}`,
      Math.max(...o.pairs.flatMap((p) => [p.service.generatorCores, p.bare.generatorCores])).toFixed(2),
    ];
  }),
));

const rows: Headline[] = outcomes.map((o) => {
  const m = median(o.pairs.map(ratio));
  return {
    suite: 'hit-modes',
    figure: `${o.scenario.name}, ${o.mode}: service (info) ÷ bare, req/s, median of ${o.pairs.length} pairs`,
    value: m.toFixed(2),
    target: `≥ ${o.scenario.target.toFixed(2)}`,
    pass: m >= o.scenario.target,
  };
});
reportHeadlines(rows);
