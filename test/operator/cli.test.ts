// Issue 13.4: the keys CLI end to end on a temporary keys file, and check-config (13.1).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { KeyStore, loadKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { cleanEnv, ROOT } from './spawn.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-operator-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['src/cli.ts', ...args], { cwd: ROOT, env: cleanEnv(env), encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function keysCopy(name: string): string {
  const path = join(dir, name);
  copyFileSync(join(ROOT, 'config/keys.yaml'), path);
  return path;
}

describe('keys administration', () => {
  it('create-key, keys list, rotate-key, revoke-key on a temporary keys file', () => {
    const file = keysCopy('keys.yaml');
    const created = cli(['create-key', '--keys-file', file, '--id', 'research', '--plan', 'basic', '--expires', '2099-12-31']);
    expect(created.status).toBe(0);
    const key = created.stdout.trim();
    expect(created.stdout).toBe(`${key}\n`);
    expect(key).toMatch(/^mdqs_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).toMatch(/^key 'research' \(plan basic, expires 2099-12-31\) added to .*keys\.yaml; only its SHA-256 hash is stored\./);
    expect(readFileSync(file, 'utf8')).not.toContain(key);
    const entry = (parse(readFileSync(file, 'utf8')) as { keys: Record<string, unknown>[] }).keys.find((k) => k.id === 'research')!;
    expect(entry).toMatchObject({ id: 'research', plan: 'basic', sha256: sha256Hex(key), expires: '2099-12-31' });
    expect(entry.created).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(KeyStore.fromFile(file).lookup(key)?.id).toBe('research');

    const listed = cli(['keys', 'list', '--keys-file', file]);
    expect(listed.status).toBe(0);
    const rows = listed.stdout.trimEnd().split('\n').map((l) => l.split(/\s{2,}/));
    expect(rows[0]).toEqual(['ID', 'PLAN', 'CREATED', 'EXPIRES', 'SHA256', 'NOTE']);
    expect(rows[1]).toEqual(['demo', 'demo', '-', '-', 'c48a01f4…', 'demo']);
    expect(rows[2]).toEqual(['research', 'basic', entry.created, '2099-12-31T00:00:00Z', `${sha256Hex(key).slice(0, 8)}…`]);
    expect(listed.stdout).not.toContain(sha256Hex(key));
    expect(listed.stderr).toBe(`2 keys in ${file}\n`);

    const rotated = cli(['rotate-key', '--keys-file', file, '--id', 'research', '--grace', '2h']);
    expect(rotated.status).toBe(0);
    const fresh = rotated.stdout.trim();
    expect(rotated.stdout).toBe(`${fresh}\n`);
    expect(fresh).not.toBe(key);
    expect(rotated.stderr).toMatch(/^new key for 'research' in .*; the old key is now 'research\.previous' and works until \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z\./);
    const snapshot = loadKeysFile(file);
    const old = [...snapshot.byHash.values()].find((k) => k.id === 'research.previous')!;
    const now = Date.now();
    expect(old.expiresAt! - now).toBeGreaterThan(3_600_000);
    expect(old.expiresAt! - now).toBeLessThanOrEqual(7_200_000);
    const during = new KeyStore(snapshot, undefined, () => now);
    expect(during.lookup(fresh)?.id).toBe('research');
    expect(during.lookup(key)?.id).toBe('research.previous');
    const after = new KeyStore(snapshot, undefined, () => old.expiresAt!);
    expect(after.lookup(key)).toBeUndefined();
    expect(after.lookup(fresh)?.id).toBe('research');
    // The new key keeps the old one's later expiry.
    expect([...snapshot.byHash.values()].find((k) => k.id === 'research')?.expiresAt).toBe(Date.parse('2099-12-31'));

    const revoked = cli(['revoke-key', '--keys-file', file, '--id', 'research.previous']);
    expect(revoked.status).toBe(0);
    expect(revoked.stdout).toBe('');
    expect(revoked.stderr).toMatch(/^key 'research\.previous' removed from /);
    expect(KeyStore.fromFile(file).lookup(key)).toBeUndefined();
    expect(KeyStore.fromFile(file).lookup(fresh)?.id).toBe('research');
    expect(readFileSync(file, 'utf8')).toContain('DEMO KEY, FOR LOCAL USE ONLY');
  });

  it('--expires takes a duration; a bad one is refused with what is allowed', () => {
    const file = keysCopy('expires.yaml');
    const ok = cli(['create-key', '--keys-file', file, '--id', 'short', '--plan', 'basic', '--expires', '30d']);
    expect(ok.status).toBe(0);
    const expires = (parse(readFileSync(file, 'utf8')) as { keys: { id: string; expires?: string }[] }).keys.find((k) => k.id === 'short')!.expires!;
    expect(Date.parse(expires) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    const before = readFileSync(file, 'utf8');
    const bad = cli(['create-key', '--keys-file', file, '--id', 'x', '--plan', 'basic', '--expires', 'tomorrow']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toBe('error: --expires "tomorrow": expected a duration (30d, 12h) or an ISO date (2027-01-31 or 2027-01-31T12:00:00Z)\n');
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('an expired key no longer authenticates', () => {
    const file = join(dir, 'expired.yaml');
    writeFileSync(file, `plans:\n  p:\n    markets: [CN]\n    features: [quotes]\n    rate_limit: { max: 10, window_ms: 60000 }\n    max_symbols: 5\nkeys:\n  - { id: old, plan: p, sha256: ${sha256Hex('k-old')}, expires: "2020-01-01T00:00:00Z" }\n  - { id: new, plan: p, sha256: ${sha256Hex('k-new')}, created: "2020-01-01" }\n`);
    const store = KeyStore.fromFile(file);
    expect(store.lookup('k-old')).toBeUndefined();
    expect(store.lookup('k-new')?.id).toBe('new');
    expect(new KeyStore(loadKeysFile(file), undefined, () => Date.parse('2019-12-31T23:59:59Z')).lookup('k-old')?.id).toBe('old');
    const listed = cli(['keys', 'list', '--keys-file', file]);
    expect(listed.stdout.split('\n')[1].split(/\s{2,}/)).toEqual(['old', 'p', '-', '2020-01-01T00:00:00Z', `${sha256Hex('k-old').slice(0, 8)}…`, 'expired']);
  });

  it('never modifies the repository keys file unless named with --keys-file', () => {
    const before = readFileSync(join(ROOT, 'config/keys.yaml'), 'utf8');
    const refused = cli(['create-key', '--id', 'x', '--plan', 'basic']);
    expect(refused.status).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe("refusing to modify the repository's example keys file config/keys.yaml (a git pull would fight your keys). "
      + 'Copy it outside the repository (cp config/keys.yaml /etc/mdqs/keys.yaml), point KEYS_FILE or keys.file at the copy, '
      + 'or pass --keys-file config/keys.yaml to modify it anyway.\n');
    for (const args of [['rotate-key', '--id', 'demo'], ['revoke-key', '--id', 'demo']]) expect(cli(args).status).toBe(2);
    expect(readFileSync(join(ROOT, 'config/keys.yaml'), 'utf8')).toBe(before);
  });

  it('KEYS_FILE names a keys file outside the repository', () => {
    const file = keysCopy('env.yaml');
    const created = cli(['create-key', '--id', 'via-env', '--plan', 'basic'], { KEYS_FILE: file });
    expect(created.status).toBe(0);
    expect(KeyStore.fromFile(file).lookup(created.stdout.trim())?.id).toBe('via-env');
  });

  it('KEY=$(npm run -s cli -- create-key …) captures only the key', () => {
    const file = keysCopy('npm.yaml');
    const stdout = execFileSync('sh', ['-c', `KEY=$(npm run -s cli -- create-key --keys-file '${file}' --id npm-team --plan basic 2>/dev/null); printf '%s' "$KEY"`], {
      cwd: ROOT, env: cleanEnv({}), encoding: 'utf8',
    });
    expect(stdout).toMatch(/^mdqs_[A-Za-z0-9_-]{43}$/);
    expect(KeyStore.fromFile(file).lookup(stdout)?.id).toBe('npm-team');
  });

  it('usage errors exit 2 with the commands', () => {
    const none = cli([]);
    expect(none.status).toBe(2);
    expect(none.stderr.split('\n')[0]).toBe('no command; commands:');
    expect(none.stderr).toContain('rotate-key --id <label> [--grace 24h] [--keys-file <path>]');
    const unknownFlag = cli(['create-key', '--idd', 'x']);
    expect(unknownFlag.status).toBe(2);
    expect(unknownFlag.stderr).toBe('unknown option --idd (options: --id, --plan, --expires, --keys-file)\n');
  });

  it('history dispatches to the history store commands (src/store/cli.ts)', () => {
    const res = cli(['history']);
    expect(`${res.stdout}${res.stderr}`).toContain('history stats');
  });
});

describe('check-config', () => {
  it('prints the effective config with secrets masked; the summary goes to stderr', () => {
    const file = keysCopy('check.yaml');
    const res = cli(['check-config'], {
      KEYS_FILE: file,
      REDIS_URL: 'redis://mdqs:hunter2@127.0.0.1:6399/0',
      MDQS__adapters__tickflow__apiKey: 'tk_secret_value',
      PORT: '9123',
    });
    expect(res.status).toBe(0);
    expect(res.stdout).not.toContain('hunter2');
    expect(res.stdout).not.toContain('tk_secret_value');
    expect(res.stdout.split('\n')[0]).toBe('# effective configuration (secrets masked)');
    const printed = parse(res.stdout) as { server: { port: number }; redis: { url: string }; adapters: { tickflow: { apiKey: string } } };
    expect(printed.server.port).toBe(9123);
    expect(printed.redis.url).toBe('redis://mdqs:***@127.0.0.1:6399/0');
    expect(printed.adapters.tickflow.apiKey).toBe('***');
    expect(res.stderr).toBe(`ok: config ${join(ROOT, 'config/default.yaml')}; keys file ${file}: 1 key, 3 plans; would listen on 127.0.0.1:9123 `
      + '(server.host is auto and the demo key (demo, anonymous) is enabled: loopback only; remove the demo key or set HOST to listen on the network)\n');
  });

  it('reports every problem and exits 1', () => {
    const res = cli(['check-config'], { MDQS__server__prot: '1', LOG_LEVEL: 'loud' });
    expect(res.status).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe('invalid configuration (2 problems):\n'
      + '  - server.prot: unknown setting (MDQS__server__prot); did you mean MDQS__server__port?\n'
      + '  - log.level: got "loud" (LOG_LEVEL); expected one of: fatal, error, warn, info, debug, trace, silent\n');
  });
});

describe('reload', () => {
  it('sends SIGHUP to the pid in the pid file', async () => {
    const child = spawn(process.execPath, ['-e', "process.on('SIGHUP', () => { console.log('HUP'); process.exit(0); }); console.log('ready'); setInterval(() => {}, 1000);"], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    const pidFile = join(dir, 'reload.pid');
    writeFileSync(pidFile, `${child.pid}\n`);
    const res = cli(['reload', '--pid-file', pidFile]);
    expect(res.status).toBe(0);
    expect(res.stderr).toBe(`keys file config/keys.yaml is valid (1 key); sent SIGHUP to ${child.pid} (from ${pidFile}); the server reloads its keys file and logs "keys reloaded".\n`);
    await new Promise((resolve) => child.on('exit', resolve));
    expect(out).toBe('ready\nHUP\n');
  });
});

describe('revoke-key with Redis', () => {
  it('publishes a key reload that instances sharing Redis receive', async () => {
    const { createServer } = await import('node:net');
    const { Redis } = await import('ioredis');
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as { port: number }).port;
        probe.close(() => resolve(p));
      });
    });
    const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const sub = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 100 });
    sub.on('error', () => undefined);
    try {
      for (let i = 0; ; i++) {
        try {
          await sub.connect();
          break;
        } catch (error) {
          if (i > 100) throw error;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      const messages: string[] = [];
      sub.on('message', (channel: string) => messages.push(channel));
      await sub.subscribe('mdqs:keys:reload');
      const file = keysCopy('redis.yaml');
      cli(['create-key', '--keys-file', file, '--id', 'gone', '--plan', 'basic']);
      const revoked = spawnSync(process.execPath, ['src/cli.ts', 'revoke-key', '--keys-file', file, '--id', 'gone'], {
        cwd: ROOT, env: cleanEnv({ REDIS_URL: `redis://127.0.0.1:${port}` }), encoding: 'utf8',
      });
      expect(revoked.status).toBe(0);
      expect(revoked.stderr.split('\n')[1]).toBe('instances sharing Redis were told to reload their keys.');
      for (let i = 0; i < 100 && messages.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(messages).toEqual(['mdqs:keys:reload']);
    } finally {
      sub.disconnect();
      server.kill('SIGKILL');
    }
  });
});
