// CPU profile of the service under cache hits (a developer tool: where a hit's microseconds go).
//   node bench/diagnostics/profile-hit.ts [quote|candles] [info|warn] [pipeline]
// Writes a .cpuprofile under /tmp/mdqs-profile-hit and prints its summary (bench/diagnostics/profile-summary.ts).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { captureHit } from '../lib/capture.ts';
import { BENCH_KEY, startService } from '../lib/processes.ts';
import { ensureWrk, runWrk } from '../lib/wrk.ts';

const [which = 'quote', level = 'info', pipeline = '10'] = process.argv.slice(2);
const path = which === 'quote' ? '/v1/quotes?symbols=AAPL.US' : '/v1/klines?symbol=AAPL.US&count=1000&adjust=none';
const dir = `/tmp/mdqs-profile-hit/${Date.now()}`;
mkdirSync(dir, { recursive: true });
ensureWrk();
const headers = { 'x-api-key': BENCH_KEY };
const service = await startService({ env: { LOG_LEVEL: level, MDQS__history__enabled: 'false' }, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
try {
  await captureHit(`${service.url}${path}`, headers);
  const result = await runWrk(`${service.url}${path}`, { seconds: 5, connections: 100, pipeline: Number(pipeline), headers, serverPid: service.pid });
  console.log(`${Math.round(result.requestsPerSecond)} req/s, ${result.serverCpuUs.toFixed(1)} µs server CPU a request`);
} finally {
  await service.stop();
}
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
if (file !== undefined) spawnSync(process.execPath, [fileURLToPath(new URL('./profile-summary.ts', import.meta.url)), `${dir}/${file}`], { stdio: 'inherit' });
