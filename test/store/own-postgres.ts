// A PostgreSQL server of a test's own: initdb into a temp directory, pg_ctl on a free port, so a
// test can stop and start it without touching the shared server other tests (and engineers) use.
// As root, initdb and pg_ctl run as the `postgres` user (initdb refuses root).
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../redis/support.ts';

/** The directory of initdb and pg_ctl, or undefined when PostgreSQL's server is not installed. */
export function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  let versions: string[] = [];
  try {
    versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  } catch {
    // not installed there
  }
  for (const v of versions) {
    if (spawnSync(join(root, v, 'bin', 'initdb'), ['--version']).status === 0) return join(root, v, 'bin');
  }
  const found = spawnSync('bash', ['-c', 'dirname "$(command -v initdb)"'], { encoding: 'utf8' });
  return found.status === 0 && found.stdout.trim() !== '.' ? found.stdout.trim() : undefined;
}

export interface OwnPostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** pg_ctl stop -m fast, waiting until the server is down. */
  stop(): void;
  /** pg_ctl start, waiting until it accepts connections. */
  start(): void;
  /** Stops the server (if running) and removes its directory. */
  dispose(): void;
}

export async function startOwnPostgres(bin = postgresBin()): Promise<OwnPostgres> {
  if (bin === undefined) throw new Error('no PostgreSQL server (initdb) installed');
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-own-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  mkdirSync(data, { mode: 0o700 });
  if (asRoot) {
    // The postgres user reaches its directory (a mkdtemp is 700) and owns the data directory.
    chmodSync(dir, 0o755);
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chownSync(data, uid, gid);
  }
  const run = (tool: string, args: string[]): SpawnSyncReturns<string> => {
    const command = asRoot ? 'runuser' : join(bin, tool);
    const argv = asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args;
    const out = spawnSync(command, argv, { encoding: 'utf8', timeout: 60_000 });
    if (out.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed (${out.status}):\n${out.stdout}\n${out.stderr}`);
    return out;
  };
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync']);
  const port = await freePort();
  let running = false;
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${data} -c fsync=off -c full_page_writes=off`;
  const own: OwnPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start() {
      run('pg_ctl', ['-D', data, '-l', join(data, 'server.log'), '-o', options, '-w', '-t', '30', 'start']);
      running = true;
    },
    stop() {
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']);
      running = false;
    },
    dispose() {
      if (running) {
        spawnSync(asRoot ? 'runuser' : join(bin, 'pg_ctl'), [...(asRoot ? ['-u', 'postgres', '--', join(bin, 'pg_ctl')] : []), '-D', data, '-m', 'immediate', '-w', 'stop']);
        running = false;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    own.start();
  } catch (error) {
    own.dispose();
    throw error;
  }
  return own;
}
