// Issue 42, item 4: one key hash listed under two ids is refused wherever the keys file is read
// (check-config, the reload command, boot, SIGHUP), naming both ids; before, the later entry won
// silently and the key moved to the later entry's plan.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { sha256Hex } from '../../src/access/keys.ts';
import { cleanEnv, ROOT, spawnService, withGuard, type Spawned } from './spawn.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-operator-keys-hash-'));
const started: Spawned[] = [];
afterAll(() => {
  for (const s of started) s.kill();
  rmSync(dir, { recursive: true, force: true });
});

const PLANS = {
  // The weak plan has CN quotes only; the full one every market.
  weak: { markets: ['CN'], features: ['quotes'], rate_limit: { max: 100, window_ms: 60_000 }, max_symbols: 5 },
  full: { markets: ['CN', 'HK', 'US'], features: ['quotes'], rate_limit: { max: 100, window_ms: 60_000 }, max_symbols: 5 },
};
const SHARED = 'shared-key';
const weakOnly = { plans: PLANS, keys: [{ id: 'weak-team', plan: 'weak', sha256: sha256Hex(SHARED) }] };
const sharedHash = {
  plans: PLANS,
  keys: [...weakOnly.keys, { id: 'full-team', plan: 'full', sha256: sha256Hex(SHARED) }],
};

function keysFile(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, stringify(content));
  return path;
}

/** The 1-based line of the second entry's sha256 in the file (the problem names it). */
function secondHashLine(path: string): number {
  const lines = readFileSync(path, 'utf8').split('\n');
  const hashes = lines.flatMap((line, i) => (line.includes(`sha256: ${sha256Hex(SHARED)}`) ? [i + 1] : []));
  expect(hashes).toHaveLength(2);
  return hashes[1];
}

function cli(args: string[], env: Record<string, string>) {
  const result = spawnSync(process.execPath, ['src/cli.ts', ...args], { cwd: ROOT, env: cleanEnv(env), encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const problem = (path: string) =>
  `  - keys[1].sha256: key full-team has the same hash as key weak-team (keys[0]) (${path}:${secondHashLine(path)}); `
  + 'one key cannot belong to two ids: give each its own key (create-key) or remove one entry';

describe('one key hash under two ids', () => {
  it('check-config refuses the keys file, naming both ids and the line', () => {
    const path = keysFile('check.yaml', sharedHash);
    const res = cli(['check-config'], { KEYS_FILE: path });
    expect(res.status).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr.split('\n').slice(0, 2)).toEqual([`invalid keys file ${path} (1 problem):`, problem(path)]);
  });

  it('the reload command refuses it and signals nothing', async () => {
    const path = keysFile('reload.yaml', sharedHash);
    const child = spawn(process.execPath, ['-e', "process.on('SIGHUP', () => { console.log('HUP'); process.exit(0); }); console.log('ready'); setInterval(() => {}, 1000);"], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      const pidFile = join(dir, 'reload.pid');
      writeFileSync(pidFile, `${child.pid}\n`);
      const res = cli(['reload', '--pid-file', pidFile, '--keys-file', path], {});
      expect(res.status).toBe(1);
      expect(res.stderr.split('\n').slice(0, 3)).toEqual([
        `invalid keys file ${path} (1 problem):`,
        problem(path),
        'not reloaded: nothing was sent; fix the keys file and run reload again (the server keeps its current keys meanwhile).',
      ]);
      // The child would have printed HUP and exited.
      await new Promise((r) => setTimeout(r, 200));
      expect(out).toBe('ready\n');
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('boot stops with both ids on stderr', async () => {
    const path = keysFile('boot.yaml', sharedHash);
    const server = spawnService(['node', 'src/server.ts'], { PORT: '0', HOST: '127.0.0.1', KEYS_FILE: path, MDQS__server__pidFile: '""', MDQS__history__enabled: 'false' });
    started.push(server);
    expect((await withGuard(server.exited, 'exit')).code).toBe(1);
    expect(server.stderr.slice(0, 2)).toEqual([`invalid keys file ${path} (1 problem):`, problem(path)]);
  });

  it('SIGHUP keeps the previous keys: the key stays on its weak plan, the error logged with both ids', async () => {
    const path = keysFile('hup.yaml', weakOnly);
    const pidFile = join(dir, 'hup.pid');
    const server = spawnService(['node', 'src/server.ts'], { PORT: '0', HOST: '127.0.0.1', KEYS_FILE: path, MDQS__server__pidFile: pidFile, MDQS__history__enabled: 'false' });
    started.push(server);
    const port = await server.port();
    await server.waitFor((l) => l.msg.startsWith('pid '), 'pid file line');
    const usQuote = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/v1/quotes?symbols=AAPL.US`, { headers: { 'x-api-key': SHARED } });
      return { status: res.status, error: (await res.json() as { error?: string }).error };
    };
    const before = await usQuote();
    expect(before).toEqual({ status: 403, error: 'MARKET_NOT_PERMITTED' });
    writeFileSync(path, stringify(sharedHash));
    process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGHUP');
    const failed = await server.waitFor((l) => l.msg === 'keys reload failed; keeping the previous keys', 'keys reload failed');
    expect(JSON.stringify(failed.err)).toContain('key full-team has the same hash as key weak-team (keys[0])');
    expect(server.logs.some((l) => l.msg === 'keys reloaded')).toBe(false);
    expect(await usQuote()).toEqual(before);
    server.proc.kill('SIGTERM');
    expect((await withGuard(server.exited, 'exit')).code).toBe(0);
  });
});
