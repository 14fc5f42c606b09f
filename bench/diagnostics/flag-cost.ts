// Server CPU a cache hit costs under different node flags or environment (a developer tool, issue
// 30). Bare node:http (sending the service's captured bytes) and, per variant, a service started as
// `npm start` starts it (info, history store off) with the variant's flags or environment added;
// pinned like the bench (BENCH_PIN=0 floats them); one `wrk -t1 -c50 -d5s` warm-up each, then
// ROUNDS rounds over all of them (the order reversed every other round); prints the median µs of
// server CPU a request, × bare's, and req/s.
//   node bench/diagnostics/flag-cost.ts [quote|candles] [rounds=3] '<variant a>' '<variant b>' …
// A variant is words: NAME=value is environment ('LOG_LEVEL=warn'), anything else a node flag
// ('--max-semi-space-size=16'); '' is the service as npm start starts it.
//   FLAG_COST_GC=1      every server (bare too) counts its garbage collections (bench/lib/gc-watch.ts):
//                       scavenges a request, their ms, major and incremental GCs, printed per run
//   FLAG_COST_PROCS=k   k processes of each variant and of bare. They all run for the whole tool, so
//                       the idle ones take ~1 % of a core each (timers, the event-loop-delay monitor)
//                       from the one measured: use k > 1 only to see the spread between starts.
import { fileURLToPath } from 'node:url';
import { captureHit } from '../lib/capture.ts';
import { BENCH_KEY, startBare, startScriptSettings, startService, type Child } from '../lib/processes.ts';
import { median } from '../lib/stats.ts';
import { ensureWrk, runWrk } from '../lib/wrk.ts';

const [which = 'quote', roundsArg = '3', ...variantArgs] = process.argv.slice(2);
const variants = variantArgs.length > 0 ? variantArgs : [''];
const path = which === 'quote' ? '/v1/quotes?symbols=600519.SH' : '/v1/klines?symbol=600519.SH&period=1d&count=1000';
const headers = { 'x-api-key': BENCH_KEY };
const GC = process.env.FLAG_COST_GC === '1';
const gcFlags = GC ? [`--import=${fileURLToPath(new URL('../lib/gc-watch.ts', import.meta.url))}`] : [];
const procs = Number(process.env.FLAG_COST_PROCS ?? 1);
process.env.BENCH_PIN ??= '1';
ensureWrk();
const { flags, env } = startScriptSettings();
const isEnv = (word: string) => /^[A-Z_][A-Za-z0-9_]*=/.test(word);

type Server = { name: string; child: Child & { stderr(): string } };

/** The server's GC totals (gc-watch answers SIGUSR2 with a `gcstat` line on stderr). */
async function gcStat(server: Server): Promise<number[] | undefined> {
  if (!GC) return undefined;
  const seen = server.child.stderr().length;
  process.kill(server.child.pid, 'SIGUSR2');
  for (let i = 0; i < 50; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const line = /gcstat ([^\n]+)\n/.exec(server.child.stderr().slice(seen));
    if (line !== null) return line[1].split(' ').map(Number);
  }
  return undefined;
}

const servers: Server[] = [];
try {
  for (let k = 0; k < procs; k++) {
    for (const variant of variants) {
      const words = variant.split(/\s+/).filter(Boolean);
      const extraEnv = Object.fromEntries(words.filter(isEnv).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]));
      const child = await startService({
        nodeArgs: [...flags, ...gcFlags, ...words.filter((w) => !isEnv(w))],
        env: { ...env, LOG_LEVEL: process.env.BENCH_LEVEL ?? 'info', MDQS__history__enabled: 'false', ...extraEnv },
      });
      servers.push({ name: variant === '' ? '(npm start)' : variant, child });
    }
  }
  const hit = await captureHit(`${servers[0].child.url}${path}`, headers);
  for (let k = 0; k < procs; k++) servers.unshift({ name: 'bare', child: await startBare(hit, gcFlags) });
  const results = new Map<string, Array<{ cpu: number; rps: number }>>();
  const run = (server: Server) => runWrk(`${server.child.url}${path}`, { seconds: 5, connections: 50, pipeline: 1, headers, serverPid: server.child.pid });
  for (const server of servers) await run(server);
  for (let r = 0; r < Number(roundsArg); r++) {
    for (const server of r % 2 === 0 ? servers : [...servers].reverse()) {
      const before = await gcStat(server);
      const result = await run(server);
      const after = await gcStat(server);
      const line = [`${server.name}: ${result.serverCpuUs.toFixed(2)} µs, ${Math.round(result.requestsPerSecond)} req/s`];
      if (before !== undefined && after !== undefined) {
        const requests = result.requestsPerSecond * 5;
        const [minor, minorMs, major, majorMs, incremental, incrementalMs] = after.map((v, i) => v - before[i]);
        line.push(`a scavenge per ${Math.round(requests / minor)} requests, ${(minorMs / minor).toFixed(3)} ms each, ${(minorMs * 1000 / requests).toFixed(2)} µs a request; major ${major} (${majorMs.toFixed(0)} ms), incremental ${incremental} (${incrementalMs.toFixed(0)} ms)`);
      }
      process.stderr.write(`${line.join('; ')}\n`);
      const list = results.get(server.name) ?? [];
      list.push({ cpu: result.serverCpuUs, rps: result.requestsPerSecond });
      results.set(server.name, list);
    }
  }
  const bareCpu = median(results.get('bare')!.map((x) => x.cpu));
  for (const [name, list] of results) {
    const cpu = median(list.map((x) => x.cpu));
    console.log(`${name.padEnd(40)} ${cpu.toFixed(2)} µs a request (${(cpu / bareCpu).toFixed(2)}× bare), ${Math.round(median(list.map((x) => x.rps)))} req/s`);
  }
} finally {
  for (const server of servers) await server.child.stop();
}
