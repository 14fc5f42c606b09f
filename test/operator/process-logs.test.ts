// Issue 29 (logs and process) on a real server, in both log formats: a refused request is one
// access line naming its reason (pretty: no "403 undefinedms" line), a keys file broken before
// SIGHUP is logged once (message and problems, no stack), and a clean shutdown ends with "stopped".
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, spawnService, until, withGuard, type Spawned } from './spawn.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-process-logs-'));
const started: Spawned[] = [];
afterAll(() => {
  for (const s of started) s.kill();
  rmSync(dir, { recursive: true, force: true });
});

const BROKEN = 'plans:\n  p:\n    markets: [CN, XX]\n    features: [quotes]\n    rate_limit: { max: 10, window_ms: 60000 }\n    max_symbols: 5\nkeys:\n  - { id: a, plan: nope, sha256: "12" }\n';
const PROBLEM = 'unknown plan nope';

function start(name: string, env: Record<string, string>): { server: Spawned; keysFile: string } {
  const keysFile = join(dir, `${name}.yaml`);
  copyFileSync(join(ROOT, 'config/keys.yaml'), keysFile);
  const server = spawnService(['node', 'src/server.ts'], { PORT: '0', HOST: '127.0.0.1', KEYS_FILE: keysFile, MDQS__server__pidFile: '""', MDQS__history__enabled: 'false', ...env });
  started.push(server);
  return { server, keysFile };
}

const plain = (line: string) => line.replace(/\x1b\[[0-9;]*m/g, ''); // eslint-disable-line no-control-regex

describe('JSON logs', () => {
  it('refusal on the access line, a broken keys file once without a stack, "stopped" last', async () => {
    const { server, keysFile } = start('json', { LOG_FORMAT: 'json' });
    const port = await server.port();
    const refused = await fetch(`http://127.0.0.1:${port}/v1/quotes?symbols=600519.SH`, { headers: { 'x-request-id': 'refused-1' } });
    // No key: the default keys file's free tier, whose plan has no quotes.
    expect(refused.status).toBe(401);
    const access = await server.waitFor((l) => l.reqId === 'refused-1', 'access line');
    expect(access).toMatchObject({ msg: 'request completed', status: 401, error: 'MISSING_API_KEY', route: '/v1/quotes' });
    expect(server.logs.filter((l) => l.reqId === 'refused-1')).toHaveLength(1);

    writeFileSync(keysFile, BROKEN);
    server.proc.kill('SIGHUP');
    const failed = await server.waitFor((l) => l.msg.startsWith('keys reload failed'), 'reload failure');
    expect(failed.level).toBe(50);
    const err = failed.err as Record<string, unknown>;
    expect(err).toEqual({ type: 'KeysFileError', message: `invalid keys file ${keysFile} (3 problems):`, problems: expect.any(Array) });
    expect((err.problems as string[]).some((p) => p.includes(PROBLEM))).toBe(true);
    // Once: no stack, and the message does not repeat the list.
    const mentions = server.raw.join('\n').split(PROBLEM).length - 1;
    expect(mentions).toBe(1);
    // The previous keys still serve.
    expect((await fetch(`http://127.0.0.1:${port}/v1/quotes?symbols=600519.SH`, { headers: { 'x-api-key': 'demo-key' } })).status).toBe(200);

    server.proc.kill('SIGTERM');
    expect(await withGuard(server.exited, 'exit')).toEqual({ code: 0, signal: null });
    await until(() => server.logs.at(-1)?.msg === 'stopped', 'stopped line');
    expect(server.logs.at(-1)).toMatchObject({ level: 30, msg: 'stopped', signal: 'SIGTERM' });
  });
});

describe('pretty logs (LOG_FORMAT=pretty)', () => {
  it('no broken extra line for a refused request; the reload failure once, without a stack; "stopped" last', async () => {
    const { server, keysFile } = start('pretty', { LOG_FORMAT: 'pretty' });
    await until(() => server.raw.some((l) => plain(l).includes('Server listening at')), `listening (stderr: ${server.stderr.join('\n')})`);
    const port = Number(/:(\d+)\s*$/.exec(plain(server.raw.find((l) => plain(l).includes('Server listening at'))!))![1]);
    const refused = await fetch(`http://127.0.0.1:${port}/v1/depth?symbol=600519.SH`, { headers: { 'x-request-id': 'refused-2', 'x-api-key': 'wrong' } });
    expect(refused.status).toBe(401);
    await until(() => server.raw.some((l) => l.includes('refused-2')), 'access line');
    const lines = server.raw.map(plain);
    const mine = lines.filter((l) => l.includes('refused-2'));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatch(/^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\] INFO: GET \/v1\/depth 401 [\d.]+ms error=INVALID_API_KEY symbols=1 refused-2$/);
    expect(lines.filter((l) => /undefined/.test(l))).toEqual([]);

    writeFileSync(keysFile, BROKEN);
    server.proc.kill('SIGHUP');
    await until(() => server.raw.some((l) => l.includes('keys reload failed')), 'reload failure');
    await new Promise((r) => setTimeout(r, 200));
    const text = server.raw.map(plain).join('\n');
    expect(text.split('keys reload failed').length - 1).toBe(1);
    expect(text.split(PROBLEM).length - 1).toBe(1);
    expect(text).not.toMatch(/^\s+at /m);

    server.proc.kill('SIGTERM');
    expect(await withGuard(server.exited, 'exit')).toEqual({ code: 0, signal: null });
    // The last line with a level is "stopped" (its fields follow on their own lines in this form).
    await until(() => /INFO: stopped$/.test(plain(server.raw.filter((l) => /\] [A-Z]+: /.test(plain(l))).at(-1) ?? '')), 'stopped line');
  });
});
