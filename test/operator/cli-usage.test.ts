// Issue 29 (CLI and process): what a new operator trips on, through the real `npm run cli`: help
// and --help, `keys create`, unknown options refused by every command, check-config --json,
// history warm with TickFlow's pool names, one date format in `keys list`, and reload that checks
// the keys file before signalling.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { simPoolMembers } from '../../adapters/sim/instruments.ts';
import { KeyStore, sha256Hex } from '../../src/access/keys.ts';
import { keysCopy as copyKeys, npmCli, ROOT } from './spawn.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-cli-usage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const keysCopy = (name: string): string => copyKeys(dir, name);

describe('help', () => {
  it('--help, -h and help print the usage on stdout and exit 0', () => {
    for (const word of ['--help', '-h', 'help']) {
      const res = npmCli([word]);
      expect(res.status, word).toBe(0);
      expect(res.stderr, word).toBe('');
      expect(res.stdout.split('\n')[0]).toBe('usage: npm run cli -- <command> [options]');
      for (const line of ['check-config [--config-file <path>] [--json]', 'keys create|rotate|revoke', 'reload [--pid-file <path>]', 'history warm [--universe']) {
        expect(res.stdout, word).toContain(line);
      }
    }
  });

  it('an unknown command still exits 2 and points at help', () => {
    const res = npmCli(['frobnicate']);
    expect(res.status).toBe(2);
    expect(res.stderr.split('\n')[0]).toBe('unknown command frobnicate; commands:');
    expect(res.stderr).toContain('npm run cli -- help');
  });
});

describe('keys create (alias of create-key, which stays)', () => {
  it('creates a key as create-key does; keys rotate and keys revoke work too', () => {
    const file = keysCopy('alias.yaml');
    const created = npmCli(['keys', 'create', '--keys-file', file, '--id', 'alias-team', '--plan', 'basic']);
    expect(created.status).toBe(0);
    const key = created.stdout.trim();
    expect(created.stdout).toBe(`${key}\n`);
    expect(KeyStore.fromFile(file).lookup(key)?.id).toBe('alias-team');
    const dashed = npmCli(['create-key', '--keys-file', file, '--id', 'dashed', '--plan', 'basic']);
    expect(dashed.status).toBe(0);
    expect(KeyStore.fromFile(file).lookup(dashed.stdout.trim())?.id).toBe('dashed');
    const rotated = npmCli(['keys', 'rotate', '--keys-file', file, '--id', 'alias-team']);
    expect(rotated.status).toBe(0);
    expect(KeyStore.fromFile(file).lookup(rotated.stdout.trim())?.id).toBe('alias-team');
    expect(npmCli(['keys', 'revoke', '--keys-file', file, '--id', 'alias-team.previous']).status).toBe(0);
    expect(KeyStore.fromFile(file).lookup(key)).toBeUndefined();
  });
});

describe('every command refuses what it does not know', () => {
  it.each([
    [['history', 'stats', '--bogus'], 'unknown option --bogus (options: --json); usage: history stats [--json]'],
    [['history', 'drop', '--symbol', '600519.SH', '--bogus', 'x'], 'unknown option --bogus (options: --symbol, --period, --from, --to, --adapter)'],
    [['history', 'warm', '--universe', 'CN_Stock', '--from', '2025-01-01', '--pause', '5'], 'unknown option --pause (options: --universe, --symbols, --period, --from, --to, --pause-ms, --ex-factors, --instruments)'],
    [['check-config', '--bogus'], 'unknown option --bogus (options: --config-file, --json)'],
    [['check-config', 'extra'], 'unexpected argument "extra" (options: --config-file, --json)'],
    [['keys', 'list', '--bogus'], 'unknown option --bogus (options: --keys-file)'],
    [['keys', 'list', '-v'], 'unknown option -v (options: --keys-file)'],
    [['reload', '--bogus'], 'unknown option --bogus (options: --pid-file, --keys-file)'],
    [['create-key', '--id', 'x', '--plan', 'basic', 'stray'], 'unexpected argument "stray" (options: --id, --plan, --expires, --keys-file)'],
    [['history', 'stats', '--json=yes'], '--json takes no value'],
  ])('%j', (args, message) => {
    const res = npmCli(args as string[]);
    expect(res.status).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr.split('\n')[0]).toContain(message);
  });
});

describe('check-config --json', () => {
  it('prints the effective config as JSON, secrets masked; the summary stays on stderr', () => {
    const file = keysCopy('check-json.yaml');
    const res = npmCli(['check-config', '--json'], {
      KEYS_FILE: file, PORT: '9124', REDIS_URL: 'redis://mdqs:hunter2@127.0.0.1:6399/0', MDQS__adapters__tickflow__apiKey: 'tk_secret_value',
    });
    expect(res.status).toBe(0);
    expect(res.stdout).not.toContain('hunter2');
    expect(res.stdout).not.toContain('tk_secret_value');
    const printed = JSON.parse(res.stdout) as { server: { port: number }; redis: { url: string }; adapters: { tickflow: { apiKey: string } }; keys: { file: string } };
    expect(printed.server.port).toBe(9124);
    expect(printed.keys.file).toBe(file);
    expect(printed.redis.url).toBe('redis://mdqs:***@127.0.0.1:6399/0');
    expect(printed.adapters.tickflow.apiKey).toBe('***');
    expect(res.stderr).toMatch(/^ok: config .*default\.yaml; keys file .*check-json\.yaml: 1 key, 3 plans; would listen on 127\.0\.0\.1:9124 /);
  });
});

describe('history warm takes the TickFlow pool names', () => {
  it('HK_Equity warms HK_Stock; history stats --json then counts its members', () => {
    const env = { MDQS__history__sqlitePath: join(dir, 'warm.sqlite') };
    const members = simPoolMembers('HK_Stock').length;
    const warmed = npmCli(['history', 'warm', '--universe', 'HK_Equity', '--period', '1d', '--from', '2025-03-03', '--to', '2025-03-07', '--pause-ms=0'], env);
    expect(warmed.stderr).not.toContain('must be one of');
    expect(warmed.status).toBe(0);
    expect(warmed.stdout).toContain(`warmed ${members}/${members} symbols of HK_Stock (1d from 2025-03-03) with ${members} vendor calls via sim`);
    const stats = npmCli(['history', 'stats', '--json'], env);
    expect(stats.status).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({ symbols: members, byPeriod: { '1d': { series: members } } });
  });
});

describe('keys list', () => {
  it('prints CREATED and EXPIRES in one format (UTC date-time), whatever the file holds', () => {
    const file = join(dir, 'dates.yaml');
    writeFileSync(file, 'plans:\n  p:\n    markets: [CN]\n    features: [quotes]\n    rate_limit: { max: 10, window_ms: 60000 }\n    max_symbols: 5\nkeys:\n'
      + `  - { id: by-date, plan: p, sha256: ${sha256Hex('a')}, created: "2025-01-02", expires: "2099-12-31" }\n`
      + `  - { id: by-time, plan: p, sha256: ${sha256Hex('b')}, created: "2025-01-02T03:04:05Z", expires: "2099-12-31T10:00:00+02:00" }\n`
      + `  - { id: none, plan: p, sha256: ${sha256Hex('c')} }\n`);
    const res = npmCli(['keys', 'list', '--keys-file', file]);
    expect(res.status).toBe(0);
    const rows = res.stdout.trimEnd().split('\n').map((l) => l.split(/\s{2,}/));
    expect(rows.map((r) => [r[0], r[2], r[3]])).toEqual([
      ['ID', 'CREATED', 'EXPIRES'],
      ['by-date', '2025-01-02T00:00:00Z', '2099-12-31T00:00:00Z'],
      ['by-time', '2025-01-02T03:04:05Z', '2099-12-31T08:00:00Z'],
      ['none', '-', '-'],
    ]);
  });
});

describe('reload checks the keys file first', () => {
  async function fakeServer(): Promise<{ pidFile: string; hups: () => number; stop: () => void }> {
    const child = spawn(process.execPath, ['-e', "let n = 0; process.on('SIGHUP', () => { n += 1; console.log('HUP ' + n); }); console.log('ready'); setInterval(() => {}, 1000);"], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    const pidFile = join(dir, `fake-${child.pid}.pid`);
    writeFileSync(pidFile, `${child.pid}\n`);
    return { pidFile, hups: () => (out.match(/HUP/g) ?? []).length, stop: () => child.kill('SIGKILL') };
  }

  it('a broken keys file: every problem, exit 1, and no SIGHUP sent', async () => {
    const server = await fakeServer();
    try {
      const file = join(dir, 'broken.yaml');
      writeFileSync(file, 'plans:\n  p:\n    markets: [CN, XX]\n    features: [quotes]\n    rate_limit: { max: 10, window_ms: 60000 }\n    max_symbols: 5\nkeys:\n'
        + '  - { id: a, plan: nope, sha256: 1234 }\n');
      const res = npmCli(['reload', '--pid-file', server.pidFile], { KEYS_FILE: file });
      expect(res.status).toBe(1);
      expect(res.stdout).toBe('');
      const lines = res.stderr.trimEnd().split('\n');
      expect(lines[0]).toBe(`invalid keys file ${file} (3 problems):`);
      expect(lines.slice(1, 4).every((l) => l.startsWith('  - '))).toBe(true);
      expect(res.stderr).toContain('plans.p.markets[1]');
      expect(res.stderr).toContain('unknown plan nope');
      expect(lines[4]).toBe('not reloaded: nothing was sent; fix the keys file and run reload again (the server keeps its current keys meanwhile).');
      expect(res.stderr).not.toContain('sent SIGHUP');
      await new Promise((r) => setTimeout(r, 200));
      expect(server.hups()).toBe(0);

      // Fixed: the same command now signals.
      copyFileSync(join(ROOT, 'config/keys.yaml'), file);
      const ok = npmCli(['reload', '--pid-file', server.pidFile], { KEYS_FILE: file });
      expect(ok.status).toBe(0);
      expect(ok.stderr).toMatch(/^keys file .*broken\.yaml is valid \(1 key\); sent SIGHUP to \d+ /);
      for (let i = 0; i < 100 && server.hups() === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(server.hups()).toBe(1);
    } finally {
      server.stop();
    }
  });
});
