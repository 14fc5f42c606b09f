// `npm run bench`: the standing suites of BENCHMARKS.md, one after the other, each in a child
// process with a time budget, then one table of their headline figures (what BENCHMARKS.md
// records) and one of the time each took.
//
//   npm run bench                    ~35 min on a quiet machine (at most ~60 min: every suite is
//                                    stopped at its budget); the two cache-hit suites are two thirds of it
//   BENCH_QUICK=1 npm run bench      ~3 min: every suite at its smoke size (a check that the suites
//                                    run, not a measurement)
//   BENCH_SUITES=cache-hit,startup npm run bench      some of them (ids below)
//   BENCH_BEFORE=<checkout> npm run bench             the suites that take it (cache hit, startup,
//                                    cold throughput, heavy burst, store retention) add that checkout
//
// Not here, because they need what a plain checkout does not have or are tools: the Redis suites
// (`npm run bench:redis`, bench/suites/redis-http.ts, bench/suites/hardening-soak.ts), the
// before/after cache-hit comparison (`npm run bench:before-after`, two checkouts), the earlier
// autocannon suite (`npm run bench:design`), and bench/diagnostics/.
// Every suite also runs alone (`node bench/suites/<file>`) and prints its full tables.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Headline } from './lib/report.ts';
import { table } from './lib/table.ts';

interface Suite {
  id: string;
  file: string;
  args?: string[];
  /** Seconds it may take before it is stopped: full run, BENCH_QUICK=1. */
  budget: number;
  quickBudget: number;
}

/** The standing suites, in the order they run (cheap and decisive first, the long soak last). */
export const SUITES: Suite[] = [
  { id: 'cache-hit', file: 'suites/cache-hit.ts', budget: 900, quickBudget: 120 },
  { id: 'hit-modes', file: 'suites/hit-modes.ts', budget: 900, quickBudget: 120 },
  { id: 'coalescing', file: 'suites/coalescing.ts', budget: 120, quickBudget: 60 },
  { id: 'heavy-request', file: 'suites/heavy-request.ts', budget: 90, quickBudget: 60 },
  { id: 'startup', file: 'suites/startup.ts', budget: 120, quickBudget: 60 },
  { id: 'store-retention', file: 'suites/store-retention.ts', budget: 120, quickBudget: 60 },
  { id: 'cold-throughput', file: 'suites/cold-throughput.ts', budget: 120, quickBudget: 60 },
  { id: 'heavy-burst', file: 'suites/heavy-burst.ts', budget: 120, quickBudget: 60 },
  { id: 'fanout', file: 'suites/fanout.ts', budget: 180, quickBudget: 60 },
  { id: 'stream-resume', file: 'suites/stream-resume.ts', budget: 240, quickBudget: 90 },
  { id: 'history-store', file: 'suites/history-store.ts', budget: 300, quickBudget: 60 },
  { id: 'store-hit', file: 'suites/store-hit.ts', budget: 240, quickBudget: 90 },
  { id: 'memory-soak', file: 'suites/memory-soak.ts', budget: 300, quickBudget: 90 },
  { id: 'memory-soak-mix', file: 'suites/memory-soak-mix.ts', budget: 360, quickBudget: 120 },
];

const QUICK = process.env.BENCH_QUICK === '1';
const HERE = fileURLToPath(new URL('./', import.meta.url));
const log = (line: string) => process.stdout.write(`${line}\n`);

interface Outcome {
  suite: Suite;
  seconds: number;
  status: string;
  headlines: Headline[];
}

/** Runs one suite as a process group (its servers and wrk with it), stopped at its budget. */
async function runSuite(suite: Suite, dir: string): Promise<Outcome> {
  const report = join(dir, `${suite.id}.jsonl`);
  const budget = QUICK ? suite.quickBudget : suite.budget;
  const started = performance.now();
  const child = spawn(process.execPath, [join(HERE, suite.file), ...(suite.args ?? [])], {
    env: { ...process.env, BENCH_REPORT: report },
    stdio: 'inherit',
    detached: true,
  });
  let timedOut = false;
  const stopGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch { /* already gone */ }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stopGroup('SIGTERM');
    setTimeout(() => stopGroup('SIGKILL'), 5000).unref();
  }, budget * 1000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  // Whatever the suite left running (a server whose stop it never reached).
  stopGroup('SIGKILL');
  let headlines: Headline[] = [];
  try {
    headlines = readFileSync(report, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Headline);
  } catch { /* it reported nothing */ }
  const status = timedOut ? `stopped at its budget (${budget} s)` : code === 0 ? 'ok' : `failed (exit ${code})`;
  return { suite, seconds: (performance.now() - started) / 1000, status, headlines };
}

async function main(): Promise<void> {
  const only = process.env.BENCH_SUITES?.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = only?.filter((id) => !SUITES.some((s) => s.id === id)) ?? [];
  if (unknown.length > 0) throw new Error(`BENCH_SUITES: unknown ${unknown.join(', ')}; the suites are ${SUITES.map((s) => s.id).join(', ')}`);
  const suites = SUITES.filter((s) => only === undefined || only.includes(s.id));
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-bench-run-'));
  const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
  const loadBefore = load();
  const started = new Date();
  log(`npm run bench${QUICK ? ' (BENCH_QUICK=1: smoke sizes, not measurements)' : ''}: ${suites.map((s) => s.id).join(', ')}; at most ${Math.round(suites.reduce((sum, s) => sum + (QUICK ? s.quickBudget : s.budget), 0) / 60)} min`);
  const outcomes: Outcome[] = [];
  try {
    for (const suite of suites) {
      log(`\n${'-'.repeat(20)} ${suite.id} (node bench/${suite.file}${suite.args ? ` ${suite.args.join(' ')}` : ''})`);
      outcomes.push(await runSuite(suite, dir));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const minutes = (Date.now() - started.getTime()) / 60_000;
  log(`\n${'='.repeat(40)} npm run bench, ${started.toISOString()}, ${minutes.toFixed(1)} min${QUICK ? ', BENCH_QUICK=1' : ''}`);
  log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; load average (1, 5, 15 min) ${loadBefore} at the start, ${load()} at the end\n`);
  const rows = outcomes.flatMap((o) => o.headlines.map((h) => [h.suite, h.figure, h.value, h.target ?? '', h.pass === undefined ? '' : h.pass ? 'PASS' : 'FAIL']));
  log(table(['suite', 'figure', 'value', 'target', 'result'], rows));
  log('');
  log(table(['suite', 'command', 'time', 'status'], outcomes.map((o) => [o.suite.id, `node bench/${o.suite.file}`, `${o.seconds.toFixed(0)} s`, o.status])));
  const failed = outcomes.filter((o) => o.status !== 'ok' || o.headlines.some((h) => h.pass === false));
  if (failed.length > 0) log(`\nnot ok: ${failed.map((o) => o.suite.id).join(', ')}`);
  process.exitCode = outcomes.some((o) => o.status !== 'ok') ? 1 : 0;
}

if (import.meta.main) {
  main().catch((error) => {
    process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
