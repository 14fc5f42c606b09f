// Child processes for the benchmarks: the real service (`node src/server.ts`, configured only
// through its documented environment variables) and the bare node:http baseline. Each runs in
// its own process so neither shares an event loop with the load generator in the parent.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchKeysYaml, featuresOf } from './bench-keys.ts';
import type { CapturedResponse } from './capture.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BARE_SERVER = fileURLToPath(new URL('../servers/bare-server.ts', import.meta.url));
const PROBE = fileURLToPath(new URL('./probe.ts', import.meta.url));

export { BENCH_KEY } from './bench-keys.ts';

export interface Child {
  name: string;
  pid: number;
  port: number;
  url: string;
  stop(): Promise<void>;
}

export interface ServiceChild extends Child {
  /** What the service wrote to stderr so far (warnings, crashes). */
  stderr(): string;
  /** process.memoryUsage() of the service (only with `probe: true`), optionally after a full GC. */
  memory(afterGc: boolean): Promise<NodeJS.MemoryUsage>;
}

/**
 * With BENCH_PIN=1 the servers run on CPU `cpu` (taskset execs the command, so the pid is the
 * server's) and pinLoadGenerator() keeps autocannon on CPU 0: one core each, less variance.
 */
export function pinned(cpu: number, command: string[]): [string, string[]] {
  return process.env.BENCH_PIN === '1' ? ['taskset', ['-c', String(cpu), ...command]] : [command[0], command.slice(1)];
}

export function pinLoadGenerator(): boolean {
  if (process.env.BENCH_PIN !== '1') return false;
  const result = spawnSync('taskset', ['-a', '-cp', '0', String(process.pid)], { stdio: 'ignore' });
  return result.status === 0;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url: string, child: ChildProcess, stderr: () => string, timeoutMs = 60_000, pollMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`child exited with ${child.exitCode} before listening:\n${stderr()}`);
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms:\n${stderr()}`);
}

function stopper(child: ChildProcess): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
}

/** A keys file with one plan whose limit a benchmark never reaches, with every feature `root` knows. */
async function writeKeysFile(dir: string, root: string): Promise<string> {
  const file = join(dir, 'keys.yaml');
  writeFileSync(file, benchKeysYaml({ features: await featuresOf(root) }));
  return file;
}

export interface ServiceOptions {
  /** Extra environment, e.g. MDQS__cache__dataMaxBytes. */
  env?: Record<string, string>;
  /** Extra node flags, e.g. --cpu-prof. */
  nodeArgs?: string[];
  /** Preload bench/lib/probe.ts (and --expose-gc) so memory() works. */
  probe?: boolean;
  /** Entry script relative to the project root; default src/server.ts (what `npm start` runs). */
  entry?: string;
  /** Another checkout to run (e.g. an earlier commit, for before/after in one run). */
  root?: string;
  /** How often /healthz is polled until it answers, ms (default 100; the startup bench uses 5). */
  pollMs?: number;
}

/** Start `node src/server.ts` exactly as `npm start` does, on a free loopback port, log level warn, with a fresh history store. */
export async function startService(options: ServiceOptions = {}): Promise<ServiceChild> {
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-bench-'));
  const port = await freePort();
  let stderr = '';
  let probeCalls = 0;
  const probeArgs = options.probe === true ? ['--expose-gc', '--import', PROBE] : [];
  const root = options.root ?? ROOT;
  const child = spawn(...pinned(1, [process.execPath, ...probeArgs, ...(options.nodeArgs ?? []), join(root, options.entry ?? 'src/server.ts')]), {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      KEYS_FILE: await writeKeysFile(dir, root),
      // A fresh history store per process (removed at stop): a store grown by earlier benchmark
      // runs in the checkout's data/ would change what a start or a soak measures.
      MDQS__history__sqlitePath: join(dir, 'history.sqlite'),
      ...options.env,
    },
    stdio: ['ignore', 'ignore', 'pipe', ...(options.probe === true ? ['ipc' as const] : [])],
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = stopper(child);
  try {
    await waitForHttp(`${url}/healthz`, child, () => stderr, 60_000, options.pollMs);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    name: 'service', pid: child.pid!, port, url,
    stderr: () => stderr,
    memory(afterGc) {
      if (options.probe !== true) return Promise.reject(new Error('startService: memory() needs probe: true'));
      const id = ++probeCalls;
      return new Promise((resolve) => {
        const onMessage = (message: { probe?: string; id?: number; usage?: NodeJS.MemoryUsage }) => {
          if (message.probe !== 'memory' || message.id !== id || message.usage === undefined) return;
          child.off('message', onMessage);
          resolve(message.usage);
        };
        child.on('message', onMessage);
        child.send({ probe: 'memory', id, gc: afterGc });
      });
    },
    async stop() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Start the bare node:http server that answers every request with `response`. */
export async function startBare(response: CapturedResponse, nodeArgs: string[] = []): Promise<Child & { stderr(): string }> {
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-bare-'));
  const file = join(dir, 'response.json');
  writeFileSync(file, JSON.stringify({ status: response.status, headers: response.headers, body: response.body.toString('base64') }));
  const port = await freePort();
  let stderr = '';
  const child = spawn(...pinned(1, [process.execPath, ...nodeArgs, BARE_SERVER, file, String(port)]), {
    cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = stopper(child);
  try {
    await waitForHttp(url, child, () => stderr);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    name: 'bare', pid: child.pid!, port, url,
    stderr: () => stderr,
    async stop() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resident set size of a process in bytes, from /proc (Linux). */
export function rssOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    return match === null ? 0 : Number(match[1]) * 1024;
  };
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

/** What `npm start` adds: the default node flags of ${MDQS_NODE_FLAGS:-…} and NAME=${NAME:-…} (or ${NAME-…}) variables. */
export function startScriptSettings(root = ROOT): { flags: string[]; env: Record<string, string> } {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const start = pkg.scripts.start;
  const flags = /\$\{MDQS_NODE_FLAGS:-([^}]*)\}/.exec(start)?.[1].split(/\s+/).filter(Boolean) ?? [];
  const env: Record<string, string> = {};
  for (const match of start.matchAll(/\b([A-Z_]+)=\$\{\1:?-([^}]*)\}/g)) env[match[1]] = match[2];
  return { flags, env };
}
