// A cached financial-statements request (issue 25), measured with wrk against the service on the
// sim, beside a bare node:http server sending the same captured bytes. Scenarios:
//   income, 1 symbol        /v1/financials/income?symbols=AAPL.US (a response-cache hit: fast path)
//   income, 100 symbols     the official client's chunk size, every symbol cached (response hit)
//   income, 100 date ranges 100 URLs of one symbol, each with its own start_date, at random: each
//                           URL's first request misses the response cache and is selected from the
//                           cached series (the data cache), later ones are response hits; the
//                           data-cache misses of financialsIncome (/metrics) show no combination
//                           refetched
//   node bench/suites/financials-hit.ts      (BENCH_ROUNDS=3, BENCH_SECONDS=4, BENCH_WARMUP=2, BENCH_CONNECTIONS=50)
//   BENCH_QUICK=1: 1 round of 1 s (~30 s)
// Prints per scenario: requests/s (median over fresh processes), the ratio to bare, server CPU µs
// per request, response bytes, and wrk's cores (under 0.8: wrk was not the limit).
import { captureHit } from '../lib/capture.ts';
import { BENCH_KEY, startBare, startService, type Child } from '../lib/processes.ts';
import { envNumber, reportHeadlines, type Headline } from '../lib/report.ts';
import { median } from '../lib/stats.ts';
import { ensureWrk, runWrk, type WrkResult } from '../lib/wrk.ts';

process.env.BENCH_PIN ??= '1';
const ROUNDS = envNumber('BENCH_ROUNDS', 3, 1);
const SECONDS = envNumber('BENCH_SECONDS', 4, 1);
const WARMUP = envNumber('BENCH_WARMUP', 2, 1);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 50);
const log = (line: string) => process.stdout.write(`${line}\n`);
const headers = { 'x-api-key': BENCH_KEY };

ensureWrk();

/** 100 stocks the sim has statements for (US, HK, CN pools), asked once from a probe service. */
async function hundredStocks(child: Child): Promise<string[]> {
  const res = await fetch(`${child.url}/v1/universes/batch`, {
    method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ ids: ['US_Stock', 'HK_Stock', 'CN_Stock'] }),
  });
  const data = ((await res.json()) as { data: Record<string, { symbols: string[] }> }).data;
  const symbols = Object.values(data).flatMap((d) => d.symbols).filter((s) => /^[A-Z0-9]+\.(US|HK|SH|SZ)$/.test(s));
  const found: string[] = [];
  for (const chunk of [symbols.slice(0, 70), symbols.slice(70, 140)]) {
    const answer = await fetch(`${child.url}/v1/financials/income?symbols=${chunk.join(',')}`, { headers });
    found.push(...Object.keys(((await answer.json()) as { data: Record<string, unknown> }).data));
  }
  return found.slice(0, 100);
}

/** Data-cache misses of financialsIncome since the process started (the Prometheus counter). */
async function dataMisses(child: Child): Promise<string> {
  const text = await (await fetch(`${child.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.includes('layer="data"') && l.includes('resource="financialsIncome"') && l.includes('result="miss"'));
  return line === undefined ? '?' : line.slice(line.lastIndexOf(' ') + 1);
}

const service = () => startService({ env: { LOG_LEVEL: 'info', MDQS__history__enabled: 'false' } });
const probe = await service();
const symbols = await hundredStocks(probe);
await probe.stop();
if (symbols.length < 100) throw new Error(`only ${symbols.length} symbols with statements`);

const SCENARIOS: { name: string; path: string; paths?: string[] }[] = [
  { name: 'income, 1 symbol', path: '/v1/financials/income?symbols=AAPL.US' },
  { name: 'income, 100 symbols', path: `/v1/financials/income?symbols=${symbols.join(',')}` },
  {
    name: 'income, 100 date ranges', path: '/v1/financials/income?symbols=AAPL.US&start_date=2015-01-01',
    paths: Array.from({ length: 100 }, (_, i) => `/v1/financials/income?symbols=AAPL.US&start_date=${2015 + (i % 10)}-${String(1 + Math.floor(i / 10)).padStart(2, '0')}-01`),
  },
];

const rows: string[] = [];
const headlines: Headline[] = [];
for (const scenario of SCENARIOS) {
  const results = new Map<string, WrkResult[]>();
  let bytes = 0;
  let misses = '';
  for (let round = 0; round < ROUNDS; round++) {
    const svc = await service();
    let stopped = false;
    let bare: Child | undefined;
    try {
      // The first request fills the data cache from the sim; the second is the hit whose bytes bare sends.
      await captureHit(`${svc.url}${scenario.path}`, headers);
      const hit = await captureHit(`${svc.url}${scenario.path}`, headers);
      bytes = hit.body.length;
      if (scenario.paths !== undefined) for (const p of scenario.paths.slice(0, 1)) await captureHit(`${svc.url}${p}`, headers);
      await runWrk(`${svc.url}${scenario.path}`, { seconds: WARMUP, connections: CONNECTIONS, pipeline: 1, headers, serverPid: svc.pid });
      const measured = await runWrk(`${svc.url}${scenario.path}`, { seconds: SECONDS, connections: CONNECTIONS, pipeline: 1, headers, serverPid: svc.pid, paths: scenario.paths });
      if (measured.non2xx > 0 || measured.errors > 0) log(`  ! service: ${measured.non2xx} non-2xx, ${measured.errors} socket errors`);
      results.set('service', [...(results.get('service') ?? []), measured]);
      misses = await dataMisses(svc);
      await svc.stop();
      stopped = true;
      bare = await startBare(hit);
      await runWrk(bare.url, { seconds: WARMUP, connections: CONNECTIONS, pipeline: 1, headers, serverPid: bare.pid });
      results.set('bare', [...(results.get('bare') ?? []), await runWrk(bare.url, { seconds: SECONDS, connections: CONNECTIONS, pipeline: 1, headers, serverPid: bare.pid })]);
    } finally {
      if (!stopped) await svc.stop();
      await bare?.stop();
    }
  }
  const svcRuns = results.get('service')!;
  const bareRuns = results.get('bare')!;
  const ratios = svcRuns.map((r, i) => r.requestsPerSecond / bareRuns[i].requestsPerSecond);
  const row = `| ${scenario.name} | ${bytes} | ${Math.round(median(svcRuns.map((r) => r.requestsPerSecond)))} | ${Math.round(median(bareRuns.map((r) => r.requestsPerSecond)))} | ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}) | ${median(svcRuns.map((r) => r.serverCpuUs)).toFixed(1)} | ${median(bareRuns.map((r) => r.serverCpuUs)).toFixed(1)} | ${Math.max(...svcRuns.map((r) => r.generatorCores)).toFixed(2)} | ${Math.max(...svcRuns.map((r) => r.foreignCores)).toFixed(2)} | ${misses} |`;
  rows.push(row);
  log(row);
  headlines.push({ suite: 'financials hit', figure: `${scenario.name}: service req/s (÷ bare), median of ${ROUNDS}`, value: `${Math.round(median(svcRuns.map((r) => r.requestsPerSecond)))} (${median(ratios).toFixed(2)})` });
}
log(`\n${ROUNDS} rounds × ${SECONDS} s, wrk -t1 -c${CONNECTIONS}, fresh processes each round, service at LOG_LEVEL=info`);
log('| scenario | bytes | service req/s | bare req/s | ÷ bare: median (range) | service CPU µs/req | bare CPU µs/req | wrk cores (max) | other processes\' cores (max) | data-cache misses (last round) |');
log('|---|---|---|---|---|---|---|---|---|---|');
for (const row of rows) log(row);
reportHeadlines(headlines);
