// Where a cache hit's server CPU goes, per request: user and system time, read and write system
// calls, context switches and minor page faults of the server process (all from /proc), for the
// bare node:http server and the service at info and warn, each a fresh process pinned like
// `npm run bench:hit` (server CPU 1, wrk CPU 0). A developer tool: it found that the service made the
// same system calls as bare and that its extra time was its own JavaScript (issue 15).
//   node bench/diagnostics/hit-split.ts [quote|candles] [pipeline=1] [rounds=2]
//   BENCH_KINDS=bare,info,warn picks the servers; BENCH_BEFORE=<checkout> runs the service from there.
import { readFileSync } from 'node:fs';
import { captureHit } from '../lib/capture.ts';
import { BENCH_KEY, startBare, startService, type Child } from '../lib/processes.ts';
import { ensureWrk, runWrk } from '../lib/wrk.ts';

const [which = 'quote', pipelineArg = '1', roundsArg = '2'] = process.argv.slice(2);
const pipeline = Number(pipelineArg);
const path = which === 'quote' ? '/v1/quotes?symbols=AAPL.US' : '/v1/klines?symbol=AAPL.US&count=1000&adjust=none';
const headers = { 'x-api-key': BENCH_KEY };
ensureWrk();

function sample(pid: number) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (pattern: RegExp, text: string) => Number(pattern.exec(text)?.[1] ?? 0);
  return {
    minflt: Number(stat[7]), user: Number(stat[11]), system: Number(stat[12]),
    reads: field(/syscr: (\d+)/, io), writes: field(/syscw: (\d+)/, io),
    voluntary: field(/^voluntary_ctxt_switches:\s+(\d+)/m, status), involuntary: field(/^nonvoluntary_ctxt_switches:\s+(\d+)/m, status),
  };
}

for (let round = 0; round < Number(roundsArg); round++) {
  for (const kind of (process.env.BENCH_KINDS ?? 'bare,info,warn').split(',')) {
    const service = await startService({ root: process.env.BENCH_BEFORE, env: { LOG_LEVEL: kind === 'bare' ? 'warn' : kind, MDQS__history__enabled: 'false' } });
    let target: Child = service;
    if (kind === 'bare') {
      target = await startBare(await captureHit(`${service.url}${path}`, headers));
      await service.stop();
    } else {
      await captureHit(`${service.url}${path}`, headers);
    }
    try {
      await runWrk(`${target.url}${path}`, { seconds: 3, connections: 100, pipeline, headers, serverPid: target.pid });
      const a = sample(target.pid);
      const result = await runWrk(`${target.url}${path}`, { seconds: 4, connections: 100, pipeline, headers, serverPid: target.pid });
      const b = sample(target.pid);
      const n = result.requests;
      const us = (ticks: number) => ((ticks * 1e4) / n).toFixed(1);
      const per = (count: number) => (count / n).toFixed(3);
      console.log([
        `${kind.padEnd(5)} p${pipeline} ${Math.round(result.requestsPerSecond)}/s`,
        `CPU ${us(b.user + b.system - a.user - a.system)} µs (user ${us(b.user - a.user)}, system ${us(b.system - a.system)})`,
        `reads ${per(b.reads - a.reads)} writes ${per(b.writes - a.writes)} switches ${per(b.voluntary - a.voluntary)}+${per(b.involuntary - a.involuntary)}`,
        `minor faults ${per(b.minflt - a.minflt)} a request; wrk ${result.generatorCores.toFixed(2)} cores`,
      ].join(', '));
    } finally {
      await target.stop();
    }
  }
}
