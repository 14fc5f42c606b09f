// Several worker processes on one port (issue 10.6): `server.workers: N` (env WORKERS).
//
//   workersProblem(workers, redis): string | undefined   the boot refusal message, if any
//   runClustered(workers, startWorker): Promise<void>
//
// N = 1: startWorker() in this process, nothing else. N > 1: this process becomes the primary; it
// forks N workers (node:cluster shares the listening socket; the primary hands out connections
// round-robin), replaces a worker that dies unexpectedly (at most one restart a second), passes
// SIGHUP on to every worker (each reloads its keys) and on SIGTERM/SIGINT passes the signal on and
// exits once every worker has drained and exited (code 1 if any worker failed to).
// Workers share rate limits, caches, fill locks and key reloads only through Redis, so N > 1
// without Redis is refused at boot; any topology will do (redis.url, redis.cluster, redis.sentinel).
//
// A worker's death resets its connections at once (issue 28.6): those it had accepted die with
// it (the kernel resets them), and the one the primary was handing it (resetHandoffsOnExit) is
// closed by the primary. The client sees ECONNRESET and can retry; nothing hangs until its own
// timeout.
import type { ChildProcess } from 'node:child_process';
import cluster, { type Worker } from 'node:cluster';
import { redisConfigured, type RedisTopologySettings } from './redis/connection.ts';

/** `redis`: the redis settings (or, as before, redis.url alone). */
export function workersProblem(workers: number, redis: string | RedisTopologySettings): string | undefined {
  const configured = typeof redis === 'string' ? redis !== '' : redisConfigured(redis);
  if (workers > 1 && !configured) {
    return `server.workers is ${workers}, but several workers share rate limits, caches, vendor budgets and key revocations only through Redis: set REDIS_URL (redis.url), redis.cluster or redis.sentinel, or run one worker (WORKERS=1)`;
  }
  return undefined;
}

/** A connection's handle as node:cluster's primary holds it (a libuv TCP handle). */
interface Handle {
  close(): void;
}

/**
 * node:cluster's round-robin primary accepts every connection itself and hands it to a worker
 * over IPC (an internal `newconn` message carrying the socket), closing its own copy only when the
 * worker acknowledges it. A worker killed between the two never acknowledges: that connection
 * stayed open in the primary, unanswered, until the client's own timeout. The primary now notes
 * the connection in transit to each worker and closes it when the worker exits, so the client is
 * reset at once. (SCHED_NONE would avoid the hand-off but leaves one worker with most keep-alive
 * connections: measured 1,012 against 10,573 requests under 32 keep-alive connections, where
 * round-robin gave 7,153 against 3,401.)
 */
export function resetHandoffsOnExit(worker: Worker): void {
  const proc = worker.process as ChildProcess & { send: (...args: unknown[]) => boolean };
  const inTransit = new Map<number, Handle>();
  const send = proc.send.bind(proc) as (...args: unknown[]) => boolean;
  proc.send = (...args: unknown[]) => {
    const [message, handle] = args as [{ cmd?: unknown; act?: unknown; seq?: unknown } | undefined, Handle | undefined];
    if (message?.cmd === 'NODE_CLUSTER' && message.act === 'newconn' && typeof message.seq === 'number' && typeof handle?.close === 'function') {
      inTransit.set(message.seq, handle);
    }
    return send(...args);
  };
  proc.on('internalMessage', (message: { cmd?: unknown; ack?: unknown } | undefined) => {
    if (message?.cmd === 'NODE_CLUSTER' && typeof message.ack === 'number') inTransit.delete(message.ack);
  });
  worker.on('exit', () => {
    for (const handle of inTransit.values()) {
      try {
        handle.close();
      } catch {
        // Already closed (the acknowledgement crossed the exit).
      }
    }
    inTransit.clear();
  });
}

export async function runClustered(workers: number, startWorker: () => Promise<void>): Promise<void> {
  if (workers <= 1 || cluster.isWorker) {
    await startWorker();
    return;
  }
  let stopping = false;
  let failed = false;
  let lastRestart = 0;
  let restart: NodeJS.Timeout | undefined;
  const fork = (): Worker => {
    const worker = cluster.fork({ MDQS_WORKER: '1' });
    resetHandoffsOnExit(worker);
    return worker;
  };
  for (let i = 0; i < workers; i += 1) fork();

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (code !== 0) failed = true;
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(failed ? 1 : 0);
      return;
    }
    process.stderr.write(`worker ${worker.process.pid} exited (code ${code}, signal ${signal}); starting another\n`);
    const wait = Math.max(0, lastRestart + 1000 - Date.now());
    lastRestart = Date.now() + wait;
    restart = setTimeout(() => {
      restart = undefined;
      // A stop that came meanwhile must not be outlived by a new worker.
      if (!stopping) fork();
    }, wait);
  });

  const each = (fn: (worker: Worker) => void) => {
    for (const worker of Object.values(cluster.workers ?? {})) if (worker !== undefined) fn(worker);
  };
  process.on('SIGHUP', () => each((worker) => worker.process.kill('SIGHUP')));
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    if (restart !== undefined) clearTimeout(restart);
    each((worker) => worker.process.kill(signal));
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
