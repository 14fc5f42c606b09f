// The fleet example end to end (issue 27): deploy/fleet/up.sh brings up three real instances
// (`node src/server.ts`), a Redis Cluster of three masters, PostgreSQL and nginx on free ports;
// requests go through nginx; deploy/fleet/down.sh stops everything by PID.
//   - every instance is ready with the cluster ("redis": "ok") and the shared PostgreSQL store;
//   - distinct cold keys, each asked of the fleet three times at once: one vendor call per key;
//   - one instance SIGKILLed: every request through nginx still answers 200 (passive health
//     checks and retries over the other instances);
//   - down.sh leaves no process of the fleet running.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIM_INSTRUMENTS } from '../../adapters/sim/instruments.ts';
import { ROOT } from '../e2e/server-process.ts';

const has = (bin: string, args: string[]) => spawnSync(bin, args).status === 0;
const NGINX = ['/usr/sbin/nginx', 'nginx'].some((bin) => has(bin, ['-v']));
const PG = spawnSync('bash', ['-c', 'ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null || command -v initdb']).status === 0;
const missing = [
  ...(NGINX ? [] : ['nginx']), ...(has('redis-server', ['--version']) ? [] : ['redis-server']), ...(PG || process.env.DATABASE_URL ? [] : ['PostgreSQL (initdb)']),
];
if (missing.length > 0) {
  if (process.env.REQUIRE_REDIS === '1') throw new Error(`REQUIRE_REDIS=1 but the fleet example needs ${missing.join(', ')}`);
  process.stderr.write(`\n*** SKIPPING the fleet example test: ${missing.join(', ')} not installed ***\n\n`);
}
const describeFleet = missing.length > 0 ? describe.skip : describe;

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A base port whose fleet ports (base … base+20 and the cluster bus ports +10 000) are free. */
async function freeBase(): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 2000) * 10;
    const ports = [base, base + 1, base + 2, base + 3, base + 11, base + 12, base + 13, base + 10_011, base + 10_012, base + 10_013, base + 20];
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return base;
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describeFleet('the fleet example (deploy/fleet)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-fleet-'));
  const env: NodeJS.ProcessEnv = { ...process.env, FLEET_DIR: dir };
  let base = 0;
  let url = '';
  let instances: number[] = [];
  const pids = () => readdirSync(join(dir, 'run')).filter((f) => f.endsWith('.pid')).map((f) => Number(readFileSync(join(dir, 'run', f), 'utf8').split('\n')[0]));

  beforeAll(async () => {
    base = await freeBase();
    // Never the CI's own DATABASE_URL: the example starts its own PostgreSQL.
    delete env.DATABASE_URL;
    const up = spawnSync(join(ROOT, 'deploy/fleet/up.sh'), { env: { ...env, FLEET_PORT_BASE: String(base) }, encoding: 'utf8', timeout: 120_000 });
    if (up.status !== 0) throw new Error(`up.sh failed (${up.status}):\n${up.stdout}\n${up.stderr}`);
    url = `http://127.0.0.1:${base}`;
    instances = [base + 1, base + 2, base + 3];
  }, 150_000);

  afterAll(() => {
    spawnSync(join(ROOT, 'deploy/fleet/down.sh'), { env, encoding: 'utf8', timeout: 60_000 });
  }, 70_000);

  it('three instances on a Redis Cluster and one PostgreSQL, behind nginx', async () => {
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    for (const port of instances) {
      const ready = await (await fetch(`http://127.0.0.1:${port}/readyz`)).json() as Record<string, unknown>;
      expect(ready).toMatchObject({ status: 'ready', redis: 'ok', history: { ok: true, backend: 'postgres' } });
    }
    // Seven processes: three instances, three Redis nodes, nginx; and PostgreSQL.
    expect(pids().filter(alive)).toHaveLength(8);
  });

  it('distinct cold keys, each asked three times at once through nginx: one vendor call per key', async () => {
    const upstream = async () => {
      let sum = 0;
      for (const port of instances) {
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        for (const m of text.matchAll(/^mdqs_upstream_requests_total\{[^}]*resource="quotes"[^}]*\} (\d+)/gm)) sum += Number(m[1]);
      }
      return sum;
    };
    const before = await upstream();
    const symbols = SIM_INSTRUMENTS.filter((i) => i.region === 'CN').slice(0, 40).map((i) => i.symbol);
    for (const symbol of symbols) {
      const answers = await Promise.all([0, 1, 2].map(() => fetch(`${url}/v1/quotes?symbols=${symbol}`, { headers: { 'x-api-key': 'demo-key' } })));
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    }
    const calls = (await upstream()) - before;
    process.stdout.write(`FLEET FIGURE: ${calls} vendor requests for ${symbols.length} distinct keys over 3 instances on a Redis Cluster (${(calls / symbols.length).toFixed(2)})\n`);
    expect(calls).toBe(symbols.length);
  }, 60_000);

  it('one instance SIGKILLed: every request through nginx still answers 200', async () => {
    const victim = Number(readFileSync(join(dir, 'run', `mdqs-${instances[1]}.pid`), 'utf8'));
    process.kill(victim, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    const statuses: number[] = [];
    for (let i = 0; i < 30; i += 1) statuses.push((await fetch(`${url}/v1/quotes?symbols=600519.SH`, { headers: { 'x-api-key': 'demo-key' } })).status);
    expect(statuses).toEqual(Array(30).fill(200));
    // nginx noticed (passive health check): its error log names the refused connects.
    expect(readFileSync(join(dir, 'logs', 'nginx-error.log'), 'utf8')).toMatch(/Connection refused/);
  }, 30_000);

  it('down.sh stops every process of the fleet', () => {
    const running = pids();
    const down = spawnSync(join(ROOT, 'deploy/fleet/down.sh'), { env, encoding: 'utf8', timeout: 60_000 });
    expect(down.status).toBe(0);
    expect(running.filter(alive)).toEqual([]);
    expect(pids()).toEqual([]);
  }, 70_000);
});
