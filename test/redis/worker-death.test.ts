// Issue 28, item 6, through real processes: `node src/server.ts` with server.workers: 2 (on a Redis
// of its own). A worker SIGKILLed with requests in flight resets its connections at once: the
// requests it was serving and the connection the primary was handing it end in ECONNRESET (the
// client can retry), never a silent hang until the client's own timeout; the other worker keeps
// answering, and the primary starts a replacement.
import { request } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type ServerProcess } from '../e2e/server-process.ts';
import { describeRedis, startPrivateRedis, type PrivateRedis } from './support.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-worker-death-'));
// A client that waits this long for a reset that should come at once has hung.
const HANG_MS = 3000;
const VENDOR_MS = 1500;

let redis: PrivateRedis;
let server: ServerProcess;

/** Pids of the workers listening now (each logs "Server listening"; a killed one is dropped). */
const listening = new Set<number>();

beforeAll(async () => {
  redis = await startPrivateRedis();
  server = await startServer({
    WORKERS: '2', REDIS_URL: redis.url, MDQS__history__enabled: 'false', MDQS__redis__commandTimeoutMs: '2000',
    MDQS__server__pidFile: join(dir, 'mdqs.pid'), MDQS__adapters__sim__latency__fixedMs: String(VENDOR_MS),
  });
  await waitForWorkers(2);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await redis?.kill();
});

async function waitForWorkers(n: number): Promise<number[]> {
  const started = Date.now();
  for (;;) {
    for (const line of server.logs) if (/^Server listening at/.test(line.msg) && typeof line.pid === 'number') listening.add(line.pid);
    for (const pid of listening) if (!alive(pid)) listening.delete(pid);
    if (listening.size >= n) return [...listening];
    if (Date.now() - started > 20_000) throw new Error(`${n} workers did not listen (stderr: ${server.stderr.join('\n')})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

type Outcome = { kind: 'status'; status: number; at: number } | { kind: 'error'; code: string; at: number } | { kind: 'hang'; at: number };

/** One request on a connection of its own; `at` is when it ended (ms since epoch). */
function call(path: string, headers: Record<string, string> = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ kind: 'status', status: res.statusCode ?? 0, at: Date.now() }));
      res.on('error', (error: NodeJS.ErrnoException) => resolve({ kind: 'error', code: error.code ?? error.message, at: Date.now() }));
    });
    req.setTimeout(HANG_MS, () => {
      resolve({ kind: 'hang', at: Date.now() });
      req.destroy();
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ kind: 'error', code: error.code ?? error.message, at: Date.now() }));
    req.end();
  });
}

describeRedis('a worker SIGKILLed with requests in flight', () => {
  it('the requests it was serving are reset at once; the other worker\'s finish', async () => {
    const [victim] = await waitForWorkers(2);
    // Slow (cold, 1.5 s vendor) requests on six connections: round robin puts about half on each worker.
    const pending = Array.from({ length: 6 }, (_, i) => call(`/v1/quotes?symbols=60000${i}.SH`, { 'x-api-key': 'demo-key' }));
    await new Promise((r) => setTimeout(r, 400));
    const killedAt = Date.now();
    process.kill(victim, 'SIGKILL');
    const outcomes = await Promise.all(pending);
    expect(outcomes.filter((o) => o.kind === 'hang')).toEqual([]);
    const reset = outcomes.filter((o) => o.kind === 'error');
    expect(reset.length).toBeGreaterThan(0);
    for (const o of reset) {
      expect(o).toMatchObject({ code: 'ECONNRESET' });
      expect(o.at - killedAt).toBeLessThan(500);
    }
    for (const o of outcomes.filter((x) => x.kind === 'status')) expect(o).toMatchObject({ status: 200 });
  });

  it('connections opened around the kill: each is answered or reset, none hangs (three kills)', async () => {
    for (let kill = 0; kill < 3; kill += 1) {
      const [victim] = await waitForWorkers(2);
      const outcomes: Promise<Outcome>[] = [];
      let stop = false;
      // Three clients opening a new connection per request, back to back, across the kill.
      const loops = [0, 1, 2].map(async () => {
        while (!stop) {
          const batch = Array.from({ length: 10 }, () => call('/healthz'));
          outcomes.push(...batch);
          await Promise.all(batch);
        }
      });
      await new Promise((r) => setTimeout(r, 200));
      process.kill(victim, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 150));
      stop = true;
      await Promise.all(loops);
      const all = await Promise.all(outcomes);
      const hung = all.filter((o) => o.kind === 'hang');
      expect(hung, `kill ${kill + 1}: ${hung.length} of ${all.length} requests hung`).toEqual([]);
      for (const o of all) {
        if (o.kind === 'status') expect(o.status).toBe(200);
        else expect(o).toMatchObject({ kind: 'error', code: 'ECONNRESET' });
      }
      expect(all.filter((o) => o.kind === 'status').length).toBeGreaterThan(20);
    }
  }, 60_000);
});
