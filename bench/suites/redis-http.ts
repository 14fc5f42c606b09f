// Issue 10 over HTTP, two real instances (`node src/server.ts`) sharing a Redis of their own:
//   1. 1000 cold identical requests spread over both instances → upstream calls in all (target 1);
//   2. throughput of a Redis-tier hit next to an in-process hit and a bare node:http server (wrk,
//      same run): instance B keeps only 1 MiB in process, so most of 4000 quote URLs filled by
//      instance A come from Redis; instance A answers the same URLs from memory.
//   node bench/suites/redis-http.ts
import { spawn } from 'node:child_process';
import { captureHit } from '../lib/capture.ts';
import { BENCH_KEY, freePort, startBare, startService } from '../lib/processes.ts';
import { ensureWrk, runWrk } from '../lib/wrk.ts';

ensureWrk();
const log = (line: string) => process.stdout.write(`${line}\n`);
const port = await freePort();
const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory', '256mb', '--maxmemory-policy', 'allkeys-lru'], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 300));
const common = {
  REDIS_URL: `redis://127.0.0.1:${port}`, MDQS__history__enabled: 'false', MDQS__adapters__sim__syntheticUniverse: '4000',
  MDQS__adapters__sim__latency__fixedMs: '300', MDQS__redis__instances: '2',
};
const a = await startService({ env: common });
const b = await startService({ env: { ...common, MDQS__cache__dataMaxBytes: '1048576', MDQS__cache__responseMaxBytes: '1048576' } });
const headers = { 'x-api-key': BENCH_KEY };
const upstreamCalls = async (resource: string) => {
  let sum = 0;
  for (const s of [a, b]) {
    const text = await (await fetch(`${s.url}/metrics`)).text();
    for (const m of text.matchAll(new RegExp(`^mdqs_upstream_requests_total\\{[^}]*resource="${resource}"[^}]*\\} (\\d+)`, 'gm'))) sum += Number(m[1]);
  }
  return sum;
};
try {
  const cold = '/v1/klines?symbol=AMZN.US&period=1d&count=500&adjust=none';
  const before = await upstreamCalls('candles');
  const answers = await Promise.all(Array.from({ length: 1000 }, (_, i) => fetch(`${(i % 2 ? a : b).url}${cold}`, { headers }).then((r) => r.status)));
  const calls = (await upstreamCalls('candles')) - before;
  log(`1000 cold identical requests over 2 instances: ${answers.filter((s) => s === 200).length} × 200, upstream calls ${calls} (target 1)`);

  const paths = Array.from({ length: 4000 }, (_, i) => `/v1/quotes?symbols=SIM${String(i + 1).padStart(4, '0')}.US`);
  for (let i = 0; i < paths.length; i += 200) await Promise.all(paths.slice(i, i + 200).map((p) => fetch(`${a.url}${p}`, { headers }).then((r) => r.text())));
  const hit = await captureHit(`${a.url}${paths[0]}`, headers);
  const bare = await startBare(hit);
  const rows: string[] = [];
  for (const [label, server, list] of [['bare node:http (one quote)', bare, undefined], ['in-process hit (instance A)', a, paths], ['Redis-tier hit (instance B, 1 MiB in process)', b, paths]] as const) {
    await runWrk(`${server.url}${paths[0]}`, { seconds: 2, connections: 64, pipeline: 1, headers, serverPid: server.pid, paths: list ? [...list] : undefined });
    const r = await runWrk(`${server.url}${paths[0]}`, { seconds: 5, connections: 64, pipeline: 1, headers, serverPid: server.pid, paths: list ? [...list] : undefined });
    rows.push(`| ${label} | ${Math.round(r.requestsPerSecond)} | ${r.serverCpuUs.toFixed(1)} | ${r.non2xx} | ${r.generatorCores.toFixed(2)} |`);
  }
  await bare.stop();
  const text = await (await fetch(`${b.url}/metrics`)).text();
  log('\n| server | req/s | server CPU µs/req | non-2xx | wrk cores |\n|---|---|---|---|---|');
  for (const row of rows) log(row);
  const lookups = [...text.matchAll(/^mdqs_cache_lookups_total\{layer="response",resource="quotes",result="(\w+)"\} (\d+)/gm)].map((m) => `${m[1]} ${m[2]}`);
  log(`instance B response-cache lookups (memory misses go on to Redis): ${lookups.join(', ')}`);
} finally {
  await a.stop();
  await b.stop();
  redis.kill('SIGKILL');
}
