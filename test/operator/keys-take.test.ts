// Issue 43.1 on real processes: the steps of docs/keys-and-plans.md (export KEYS_FILE, create-key, reload) against a
// server started by `npm start`. A server reading another keys file makes the key commands refuse,
// naming both files; the same file makes the new key answer 200.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keysCopy as copyKeys, npmCli, ROOT, spawnService, type Spawned } from './spawn.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-keys-take-'));
const started: Spawned[] = [];
afterAll(() => {
  for (const s of started) s.kill();
  rmSync(dir, { recursive: true, force: true });
});

// The pid file the server writes and the CLI reads; a temporary one instead of data/mdqs.pid, so a
// server someone runs from this checkout is left alone (both sides read it from the same setting).
function pidEnv(name: string): Record<string, string> {
  return { MDQS__server__pidFile: join(dir, name, 'mdqs.pid'), MDQS__history__enabled: 'false' };
}

function npmStart(env: Record<string, string>): Spawned {
  const s = spawnService(['npm', 'start'], { PORT: '0', HOST: '127.0.0.1', ...env });
  started.push(s);
  return s;
}

const keysCopy = (name: string): string => copyKeys(dir, name);

describe('the documented steps: export KEYS_FILE, create-key, reload', () => {
  it('a server on its default keys file: create-key, rotate-key, revoke-key and reload refuse, naming both files', async () => {
    const env = pidEnv('default');
    const server = npmStart(env);
    await server.port();
    const repoKeys = join(ROOT, 'config/keys.yaml');
    const mine = keysCopy('mine.yaml');
    const before = readFileSync(mine, 'utf8');
    const refusal = `refusing: the running server (pid ${Number(readFileSync(env.MDQS__server__pidFile, 'utf8'))}, ${env.MDQS__server__pidFile}) reads the keys file ${repoKeys}, not ${mine}; `
      + `a key changed here would not be accepted. Use KEYS_FILE=${repoKeys} (or --keys-file), or restart the server with KEYS_FILE=${mine}.\n`;
    for (const args of [
      ['create-key', '--id', 'research-team', '--plan', 'basic', '--expires', '90d'],
      ['rotate-key', '--id', 'demo'],
      ['revoke-key', '--id', 'demo'],
      ['reload'],
    ]) {
      const res = npmCli(args, { ...env, KEYS_FILE: mine });
      expect(res.status, args[0]).toBe(1);
      expect(res.stdout, args[0]).toBe('');
      expect(res.stderr, args[0]).toBe(`error: ${refusal}`);
    }
    expect(readFileSync(mine, 'utf8')).toBe(before);
    expect(server.logs.some((l) => l.msg === 'keys reloaded')).toBe(false);
  });

  it('a server on the exported keys file: the new key answers 200 after reload, and the log names the file', async () => {
    const mine = keysCopy('shared.yaml');
    const env = { ...pidEnv('shared'), KEYS_FILE: mine };
    const server = npmStart(env);
    const port = await server.port();
    const created = npmCli(['create-key', '--id', 'research-team', '--plan', 'basic', '--expires', '90d'], env);
    expect(created.status, created.stderr).toBe(0);
    const key = created.stdout.trim();
    const quote = () => fetch(`http://127.0.0.1:${port}/v1/quotes?symbols=600519.SH`, { headers: { 'x-api-key': key } });
    expect((await quote()).status).toBe(401);
    const reloaded = npmCli(['reload'], env);
    expect(reloaded.status, reloaded.stderr).toBe(0);
    const line = await server.waitFor((l) => l.msg === 'keys reloaded', 'keys reloaded');
    expect(line).toMatchObject({ keys: 2, keys_file: mine });
    const res = await quote();
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { symbol: string }[] }).data[0].symbol).toBe('600519.SH');
  });
});
