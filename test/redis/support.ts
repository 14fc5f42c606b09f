// Real Redis for the scale-out tests: the shared server (REDIS_URL, default 127.0.0.1:6379) and
// private redis-server processes on free ports that a test may stop, freeze or kill by PID.
// Without Redis the suites skip with a visible message; REQUIRE_REDIS=1 (set by .ci/run) turns
// that skip into a failure.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { describe } from 'vitest';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const REQUIRED = process.env.REQUIRE_REDIS === '1';

async function reachable(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 500, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

const available = await reachable(REDIS_URL);
const hasServerBinary = spawnSync('redis-server', ['--version']).status === 0;

if (!available || !hasServerBinary) {
  const why = !available ? `no Redis answers at ${REDIS_URL}` : 'redis-server is not on PATH';
  if (REQUIRED) throw new Error(`REQUIRE_REDIS=1 but ${why}: the Redis tests must run`);
  process.stderr.write(`\n*** SKIPPING Redis tests: ${why} (set REDIS_URL or install redis-server; CI sets REQUIRE_REDIS=1) ***\n\n`);
}

/** `describe` when Redis is here, `describe.skip` (with the message above) when not. */
export const describeRedis = available && hasServerBinary ? describe : describe.skip;

/** The shared server, on a database of the test file's own so parallel files never collide. */
export function sharedUrl(db: number): string {
  const url = new URL(REDIS_URL);
  url.pathname = `/${db}`;
  return url.toString();
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface PrivateRedis {
  url: string;
  port: number;
  readonly pid: number;
  /** SIGSTOP: the socket stays open and nothing answers. */
  freeze(): void;
  thaw(): void;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
  /** Start again on the same port. */
  restart(): Promise<void>;
}

async function waitUntil(check: () => Promise<boolean>, what: string, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let proc: ChildProcess;
  const launch = async () => {
    proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitUntil(() => reachable(url), `redis-server on ${port}`);
  };
  await launch();
  const handle: PrivateRedis = {
    url,
    port,
    get pid() {
      return proc.pid!;
    },
    freeze: () => void process.kill(proc.pid!, 'SIGSTOP'),
    thaw: () => void process.kill(proc.pid!, 'SIGCONT'),
    async kill() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      process.kill(proc.pid!, 'SIGCONT');
      process.kill(proc.pid!, 'SIGKILL');
      await exited;
    },
    async restart() {
      await handle.kill();
      await launch();
    },
  };
  return handle;
}

export { waitUntil };

/** A fail-fast client (src/redis/connection.ts) that is connected when returned. */
export async function connectedClient(url: string, into?: Redis[], commandTimeoutMs = 2000): Promise<Redis> {
  const { createRedisClient } = await import('../../src/redis/connection.ts');
  // Generous by default: a suite running 8 files on 2 cores stalls event loops for long enough
  // to flip a 250 ms timeout. The fault tests pass the production 250 ms.
  const client = createRedisClient(url, { commandTimeoutMs });
  into?.push(client);
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  return client;
}
