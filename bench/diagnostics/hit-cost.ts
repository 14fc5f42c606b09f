// What a cache hit costs the service's own code, in-process and without the network: the
// service's request listener (fast path included) against a bare listener that writes the same
// status, headers and body, both driven with node:http's own IncomingMessage and ServerResponse
// over a socket that discards what it is given. No kernel, no load generator, no other process:
// the figure moves by a few percent between runs, where `npm run bench:hit` moves by ±20 %.
// A developer tool to find and check a change; the issue's targets are `npm run bench:hit`'s ratios.
//   node bench/diagnostics/hit-cost.ts [quote|candles] [seconds=3] [rounds=3] >/dev/null   (LOG_LEVEL=info by default)
// Results go to stderr; the service's log lines go to stdout.
import type { RequestListener } from 'node:http';
import { inProcessHit } from '../lib/in-process-hit.ts';

const [which = 'quote', secondsArg = '3', roundsArg = '3'] = process.argv.slice(2);
const path = which === 'quote' ? '/v1/quotes?symbols=AAPL.US' : '/v1/klines?symbol=AAPL.US&count=1000&adjust=none';
const hit = await inProcessHit(path);
const { drive, service: serviceListener, bare: bareListener } = hit;
if (process.env.HIT_COST_SHOW === '1') process.stderr.write(`${hit.captured.slice(0, hit.captured.indexOf('\r\n\r\n'))}\n`);

/** Drives hits for `seconds`, yielding to the event loop every 200 (so log writes complete as in a server). */
async function measure(listener: RequestListener, seconds: number): Promise<number> {
  const start = process.cpuUsage();
  const until = performance.now() + seconds * 1000;
  let n = 0;
  while (performance.now() < until) {
    for (let i = 0; i < 200; i++) drive(listener);
    n += 200;
    await new Promise((resolve) => setImmediate(resolve));
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

const seconds = Number(secondsArg);
await measure(bareListener, 1);
await measure(serviceListener, 1);
const rows: Array<{ bare: number; service: number }> = [];
for (let round = 0; round < Number(roundsArg); round++) {
  const bare = await measure(bareListener, seconds);
  const service = await measure(serviceListener, seconds);
  rows.push({ bare, service });
  process.stderr.write(`round ${round + 1}: bare ${bare.toFixed(2)} µs, service ${service.toFixed(2)} µs, service − bare ${(service - bare).toFixed(2)} µs\n`);
}
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
process.stderr.write(`${which} at ${process.env.LOG_LEVEL ?? 'info'}: median service − bare ${median(rows.map((r) => r.service - r.bare)).toFixed(2)} µs a hit (bare ${median(rows.map((r) => r.bare)).toFixed(2)} µs)\n`);
await hit.close();
