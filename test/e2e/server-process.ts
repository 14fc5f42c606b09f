// Start the real server (`node src/server.ts`) as a child process on an ephemeral port and follow
// its pino JSON log lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

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

// A guard so a broken server fails the test instead of hanging it; never a timing assertion.
const GUARD_MS = 20_000;

export async function startServer(env: Record<string, string> = {}): Promise<ServerProcess> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) =>
    !name.startsWith('MDQS__') && !['CONFIG_FILE', 'KEYS_FILE', 'REDIS_URL', 'PORT', 'HOST', 'LOG_LEVEL'].includes(name)));
  const proc = spawn(process.execPath, ['src/server.ts'], {
    cwd: ROOT,
    env: { ...inherited, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const raw: string[] = [];
  const logs: LogLine[] = [];
  const stderr: string[] = [];
  const waiters: { match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.on('exit', (code, signal) => resolve({ code, signal }));
  });
  createInterface({ input: proc.stderr! }).on('line', (line) => stderr.push(line));
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    raw.push(line);
    let parsed: LogLine;
    try {
      parsed = JSON.parse(line) as LogLine;
    } catch {
      return;
    }
    logs.push(parsed);
    for (const waiter of [...waiters]) {
      if (waiter.match(parsed)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(parsed);
      }
    }
  });

  const waitFor = (match: (line: LogLine) => boolean, what: string): Promise<LogLine> => {
    const seen = logs.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<LogLine>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no log line "${what}" (stderr: ${stderr.join('\n')})`)), GUARD_MS);
      void exited.then(() => {
        // Let the last stdout lines drain before giving up.
        setTimeout(() => reject(new Error(`server exited before "${what}" (stderr: ${stderr.join('\n')})`)), 200);
      });
      waiters.push({ match, resolve: (line) => { clearTimeout(timer); resolve(line); } });
    });
  };

  const listening = await waitFor((l) => /Server listening at http:\/\/127\.0\.0\.1:\d+/.test(l.msg), 'Server listening');
  const port = Number(/:(\d+)$/.exec(listening.msg)![1]);
  return {
    proc, base: `http://127.0.0.1:${port}`, port, raw, logs, stderr, waitFor, exited,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}
