// server.workers (issue 10.6): N > 1 without Redis is refused with a clear message; with N
// workers, node:cluster serves one port from N processes.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { workersProblem } from '../../src/cluster.ts';
import { ROOT } from '../e2e/server-process.ts';

describe('server.workers', () => {
  it('refuses several workers without Redis, naming the fix', () => {
    expect(workersProblem(1, '')).toBeUndefined();
    expect(workersProblem(4, 'redis://127.0.0.1:6379')).toBeUndefined();
    expect(workersProblem(2, '')).toBe('server.workers is 2, but several workers share rate limits, caches, vendor budgets and key revocations only through Redis: set REDIS_URL (redis.url), redis.cluster or redis.sentinel, or run one worker (WORKERS=1)');
    // Any topology will do; an empty url with nothing else is no Redis.
    expect(workersProblem(2, { url: '', cluster: ['127.0.0.1:7000'] })).toBeUndefined();
    expect(workersProblem(2, { url: '', sentinel: { name: 'mymaster', nodes: ['127.0.0.1:26379'] } })).toBeUndefined();
    expect(workersProblem(2, { url: '' })).toMatch(/^server\.workers is 2, but/);
  });

  it('runClustered(2) serves one port from two worker processes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mdqs-cluster-'));
    const script = join(dir, 'main.ts');
    writeFileSync(script, `
import { createServer } from 'node:http';
import cluster from 'node:cluster';
import { runClustered } from ${JSON.stringify(join(ROOT, 'src/cluster.ts'))};
await runClustered(2, async () => {
  const server = createServer((_req, res) => res.end(String(process.pid)));
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    console.log('listening ' + server.address().port);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
});
if (cluster.isPrimary) console.log('primary ' + process.pid);
`);
    const { freePort } = await import('./support.ts');
    const port = await freePort();
    const proc = spawn(process.execPath, [script], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
    const lines: string[] = [];
    const listening = new Promise<void>((resolve) => {
      createInterface({ input: proc.stdout! }).on('line', (line) => {
        lines.push(line);
        if (lines.filter((l) => l.startsWith('listening')).length === 2) resolve();
      });
    });
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    try {
      await listening;
      const pids = new Set<string>();
      for (let i = 0; i < 40 && pids.size < 2; i += 1) {
        pids.add(await (await fetch(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } })).text());
      }
      expect(pids.size).toBe(2);
      expect(pids.has(String(proc.pid))).toBe(false);
    } finally {
      proc.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
