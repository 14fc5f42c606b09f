// Spawn the service the way an operator does (`npm start`, or `node src/server.ts`) and follow its
// JSON log lines on stdout.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface Spawned {
  proc: ChildProcess;
  /** Raw stdout lines, in order (JSON or not). */
  raw: string[];
  logs: LogLine[];
  stderr: string[];
  waitFor(match: (line: LogLine) => boolean, what: string): Promise<LogLine>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The port from Fastify's "Server listening at" line. */
  port(): Promise<number>;
  kill(): void;
}

// A guard so a broken server fails the test instead of hanging it; never a timing assertion.
export const GUARD_MS = 20_000;

/** The environment minus anything that would configure the service from outside the test. */
export function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || name.startsWith('MDQS__') || name.startsWith('npm_')) continue;
    if (['CONFIG_FILE', 'KEYS_FILE', 'REDIS_URL', 'PORT', 'HOST', 'LOG_LEVEL', 'LOG_FORMAT'].includes(name)) continue;
    out[name] = value;
  }
  return { ...out, LOG_LEVEL: 'info', ...extra };
}

export function spawnService(command: string[], env: Record<string, string>): Spawned {
  const proc = spawn(command[0], command.slice(1), { cwd: ROOT, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
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
      return; // npm's own banner
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
  return {
    proc, raw, logs, stderr, waitFor, exited,
    async port() {
      const line = await waitFor((l) => /^Server listening at http:\/\/[\d.]+:\d+$/.test(l.msg), 'Server listening');
      return Number(/:(\d+)$/.exec(line.msg)![1]);
    },
    kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    },
  };
}

/** Resolves with the exit, or rejects past the guard. */
export function withGuard<T>(promise: Promise<T>, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`guard: ${what}`)), GUARD_MS);
    promise.then((v) => { clearTimeout(timer); resolve(v); }, (e) => { clearTimeout(timer); reject(e); });
  });
}

/** 'open' when something accepts on the port, else the error code (ECONNREFUSED once released). */
export function probe(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve('open');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > GUARD_MS) throw new Error(`guard: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** `npm run -s cli -- …` exactly as docs/keys-and-plans.md has it (-s: npm's banner off stdout). */
export function npmCli(args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('npm', ['run', '-s', 'cli', '--', ...args], { cwd: ROOT, env: cleanEnv(env), encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A copy of the repository's config/keys.yaml at `dir`/`name`. */
export function keysCopy(dir: string, name: string): string {
  const path = join(dir, name);
  copyFileSync(join(ROOT, 'config/keys.yaml'), path);
  return path;
}
