// Start the real server (`node src/server.ts`) as a child process on an ephemeral port and follow
// its pino JSON log lines (the operator tests' spawnService, waited until it listens).
import type { ChildProcess } from 'node:child_process';
import { spawnService, type LogLine } from '../operator/spawn.ts';

export { ROOT, type LogLine } from '../operator/spawn.ts';

export interface ServerProcess {
  proc: ChildProcess;
  base: string;
  port: number;
  /** Raw stdout lines, in order. */
  raw: string[];
  logs: LogLine[];
  stderr: string[];
  /** Resolves with the first log line (already seen or future) matching `match`. */
  waitFor(match: (line: LogLine) => boolean, what: string): Promise<LogLine>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

export async function startServer(env: Record<string, string> = {}): Promise<ServerProcess> {
  const spawned = spawnService([process.execPath, 'src/server.ts'], { PORT: '0', HOST: '127.0.0.1', ...env });
  const port = await spawned.port();
  const { proc, raw, logs, stderr, waitFor, exited } = spawned;
  return {
    proc, base: `http://127.0.0.1:${port}`, port, raw, logs, stderr, waitFor, exited,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}
