// Several worker processes on one port (issue 10.6): `server.workers: N` (env WORKERS).
//
//   workersProblem(workers, redisUrl): string | undefined   the boot refusal message, if any
//   runClustered(workers, startWorker): Promise<void>
//
// N = 1: startWorker() in this process, nothing else. N > 1: this process becomes the primary; it
// forks N workers (node:cluster shares the listening socket; the primary hands out connections
// round-robin), replaces a worker that dies unexpectedly (at most one restart a second), passes
// SIGHUP on to every worker (each reloads its keys) and on SIGTERM/SIGINT passes the signal on and
// exits once every worker has drained and exited (code 1 if any worker failed to).
// Workers share rate limits, caches, fill locks and key reloads only through Redis, so N > 1
// without Redis is refused at boot.
import cluster, { type Worker } from 'node:cluster';

export function workersProblem(workers: number, redisUrl: string): string | undefined {
  if (workers > 1 && redisUrl === '') {
    return `server.workers is ${workers}, but several workers share rate limits, caches and key revocations only through Redis: set REDIS_URL (redis.url), or run one worker (WORKERS=1)`;
  }
  return undefined;
}

export async function runClustered(workers: number, startWorker: () => Promise<void>): Promise<void> {
  if (workers <= 1 || cluster.isWorker) {
    await startWorker();
    return;
  }
  let stopping = false;
  let failed = false;
  let lastRestart = 0;
  const fork = (): Worker => cluster.fork({ MDQS_WORKER: '1' });
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
    setTimeout(fork, wait);
  });

  const each = (fn: (worker: Worker) => void) => {
    for (const worker of Object.values(cluster.workers ?? {})) if (worker !== undefined) fn(worker);
  };
  process.on('SIGHUP', () => each((worker) => worker.process.kill('SIGHUP')));
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    each((worker) => worker.process.kill(signal));
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
