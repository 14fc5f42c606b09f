// The heaviest request a plan allows must not starve the event loop (issue 14 item 2): run it
// against the real service (`node src/server.ts`, a child process) while probing /healthz every
// 10 ms from this process, and report the slowest /healthz answer, the request's own time and
// body size, and the 400 for a request over the plan's bars budget.
//   node bench/suites/heavy-request.ts
import { BENCH_KEY, startService } from '../lib/processes.ts';
import { reportHeadlines } from '../lib/report.ts';

const service = await startService({ env: { MDQS__history__enabled: 'false' } });
const symbols = ['600519.SH', '000001.SZ', '601318.SH', '600036.SH'];
// 4 symbols × 15m × 8000 bars: (8000 + 2) × 15 = 120,030 base minute bars each, 480,120 in all:
// just inside the default max_bars of 500,000.
const heavy = `${service.url}/v1/klines/batch?symbols=${symbols.join(',')}&period=15m&count=8000&adjust=forward`;
const over = `${service.url}/v1/klines/batch?symbols=${symbols.join(',')},600000.SH&period=15m&count=8000`;
try {
  const refused = await fetch(over, { headers: { 'x-api-key': BENCH_KEY } });
  const refusal = await refused.json() as { error: string; message: string };
  let worst = 0;
  let probes = 0;
  let running = true;
  const probe = (async () => {
    while (running) {
      const t0 = performance.now();
      await fetch(`${service.url}/healthz`).then((r) => r.text());
      worst = Math.max(worst, performance.now() - t0);
      probes += 1;
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const t0 = performance.now();
  const res = await fetch(heavy, { headers: { 'x-api-key': BENCH_KEY, 'accept-encoding': 'identity' } });
  const body = await res.arrayBuffer();
  const took = performance.now() - t0;
  running = false;
  await probe;
  reportHeadlines([
    { suite: 'heavy request', figure: `slowest /healthz while the heaviest allowed request runs (${res.status}, ${Math.round(took)} ms, ${body.byteLength} B)`, value: `${Math.round(worst)} ms`, pass: res.status === 200 },
    { suite: 'heavy request', figure: 'a request over the plan\'s bars budget', value: `${refused.status} ${refusal.error}`, target: '400 REQUEST_TOO_LARGE', pass: refused.status === 400 && refusal.error === 'REQUEST_TOO_LARGE' },
  ]);
  console.log(JSON.stringify({
    over_budget: { status: refused.status, error: refusal.error, message: refusal.message },
    heaviest_allowed: { status: res.status, ms: Math.round(took), body_bytes: body.byteLength },
    healthz: { probes, worst_ms: Math.round(worst) },
  }, null, 2));
} finally {
  await service.stop();
}
