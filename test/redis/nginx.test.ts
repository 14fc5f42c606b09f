// End to end through real nginx (deploy/nginx.conf) in front of two real instances
// (`node src/server.ts`) sharing Redis: the per-key limit holds through the balancer, whichever
// instance each request lands on. Needs Debian's nginx (.ci/run installs it).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { sha256Hex } from '../../src/access/keys.ts';
import { ROOT, startServer, type ServerProcess } from '../e2e/server-process.ts';
import { connectedClient, describeRedis, freePort, sharedUrl, waitUntil } from './support.ts';
import type { Redis } from 'ioredis';

const NGINX = ['/usr/sbin/nginx', 'nginx'].find((bin) => spawnSync(bin, ['-v']).status === 0);
if (NGINX === undefined) {
  if (process.env.REQUIRE_REDIS === '1') throw new Error('REQUIRE_REDIS=1 but nginx is not installed (apt-get install nginx)');
  process.stderr.write('\n*** SKIPPING the nginx end-to-end test: nginx is not installed ***\n\n');
}
const describeNginx = NGINX === undefined ? describe.skip : describeRedis;
const REDIS_DB_URL = sharedUrl(14);
const LIMIT = 12;

describeNginx('two instances behind nginx', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-nginx-'));
  let servers: ServerProcess[] = [];
  let nginx: ChildProcess | undefined;
  let base = '';
  let admin: Redis;
  const clients: Redis[] = [];

  beforeAll(async () => {
    admin = await connectedClient(REDIS_DB_URL, clients);
    await admin.flushdb();
    const keysFile = join(dir, 'keys.yaml');
    writeFileSync(keysFile, stringify({
      plans: {
        p: { markets: ['CN', 'HK', 'US'], features: ['quotes'], rate_limit: { max: LIMIT, window_ms: 60_000 }, max_symbols: 10 },
        wide: { markets: ['CN', 'HK', 'US'], features: ['klines_daily'], rate_limit: { max: 10_000, window_ms: 60_000 }, max_symbols: 10 },
      },
      keys: [{ id: 'e2e', plan: 'p', sha256: sha256Hex('e2e-key') }, { id: 'sf', plan: 'wide', sha256: sha256Hex('sf-key') }],
    }));
    // A slow sim (400 ms a call) so that concurrent cold requests really overlap; history off so
    // every cold request would be an upstream call without the fill lock.
    const env = {
      REDIS_URL: REDIS_DB_URL, KEYS_FILE: keysFile, MDQS__server__trustProxy: 'true', MDQS__redis__instances: '2', MDQS__redis__commandTimeoutMs: '2000', LOG_LEVEL: 'info',
      MDQS__adapters__sim__latency__fixedMs: '400', MDQS__history__enabled: 'false',
    };
    servers = await Promise.all([startServer(env), startServer(env)]);
    const port = await freePort();
    const conf = readFileSync(join(ROOT, 'deploy/nginx.conf'), 'utf8')
      .replace('listen 8080;', `listen 127.0.0.1:${port};`)
      .replace('server 127.0.0.1:8081', `server 127.0.0.1:${servers[0].port}`)
      .replace('server 127.0.0.1:8082', `server 127.0.0.1:${servers[1].port}`)
      // Two instances here (deploy/fleet/up.sh runs the three).
      .replace(/^\s*server 127\.0\.0\.1:8083 [^;]*;$/m, '')
      .replace(/access_log [^;]+;/, `access_log ${join(dir, 'access.log')};`)
      .replace(/error_log [^;]+;/, `error_log ${join(dir, 'error.log')} warn;`)
      .replace('worker_processes auto;', `worker_processes 1;\npid ${join(dir, 'nginx.pid')};\ndaemon off;\nerror_log ${join(dir, 'error.log')} warn;`);
    const confFile = join(dir, 'nginx.conf');
    writeFileSync(confFile, conf);
    nginx = spawn(NGINX!, ['-p', dir, '-c', confFile], { stdio: 'ignore' });
    base = `http://127.0.0.1:${port}`;
    await waitUntil(async () => {
      try {
        return (await fetch(`${base}/healthz`)).status === 200;
      } catch {
        return false;
      }
    }, 'nginx', 10_000);
  }, 60_000);

  afterAll(async () => {
    if (nginx?.pid !== undefined && nginx.exitCode === null) {
      const exited = new Promise((r) => nginx!.once('exit', r));
      process.kill(nginx.pid, 'SIGQUIT');
      await exited;
    }
    await Promise.all(servers.map((s) => s.stop()));
    for (const c of clients) c.disconnect();
  });

  it('the per-key limit holds through the balancer: exactly the limit is admitted, on both instances', async () => {
    // Four clients at a time (header and query key alternating), 3 × the limit in all.
    const responses: Response[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (next < 3 * LIMIT) {
        const i = next++;
        responses.push(await fetch(`${base}/v1/quotes?symbols=AAPL.US${i % 2 === 0 ? '' : '&api_key=e2e-key'}`, { headers: i % 2 === 0 ? { 'x-api-key': 'e2e-key' } : {} }));
      }
    }));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2 * LIMIT);
    const refused = responses.find((r) => r.status === 429)!;
    const body = await refused.json() as Record<string, unknown>;
    expect(body).toMatchObject({ code: 429, error: 'RATE_LIMITED' });
    expect(refused.headers.get('retry-after')).toBe(String(Math.ceil(Number(body.retry_after_ms) / 1000)));
    expect(refused.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
    // Both instances answered some of them (round robin), so the limit was really shared.
    const served = await Promise.all(servers.map(async (server) => {
      const text = await (await fetch(`${server.base}/metrics`)).text();
      return [...text.matchAll(/^mdqs_http_requests_total\{[^}]*route="\/v1\/quotes"[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    }));
    expect(served[0]).toBeGreaterThan(0);
    expect(served[1]).toBeGreaterThan(0);
    expect(served[0] + served[1]).toBe(3 * LIMIT);
    expect(await admin.llen('mdqs:v2:rl:{key:e2e}')).toBe(LIMIT);
  });

  it('single-flight holds through the balancer: 40 concurrent cold requests make one upstream call in all', async () => {
    const upstreamCalls = async () => {
      const counts = await Promise.all(servers.map(async (server) => {
        const text = await (await fetch(`${server.base}/metrics`)).text();
        return [...text.matchAll(/^mdqs_upstream_requests_total\{[^}]*resource="candles"[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
      }));
      return counts;
    };
    const before = await upstreamCalls();
    const answers = await Promise.all(Array.from({ length: 40 }, () =>
      fetch(`${base}/v1/klines?symbol=NVDA.US&period=1d&count=60&adjust=none`, { headers: { 'x-api-key': 'sf-key' } })));
    expect(answers.map((r) => r.status)).toEqual(Array(40).fill(200));
    const bodies = new Set(await Promise.all(answers.map((r) => r.text())));
    expect(bodies.size).toBe(1);
    const after = await upstreamCalls();
    // Both instances served some of the 40 (round robin), one of them called the vendor once.
    expect(after[0] - before[0] + after[1] - before[1]).toBe(1);
  });
});
