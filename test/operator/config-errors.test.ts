// Issue 13.1: config mistakes are caught with messages that name the setting, its source
// (file:line or variable), the bad value and what is allowed; CONFIG_FILE holds only changes.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG_FILE, loadConfig, loadDefaultConfig, mergeConfig, nearest } from '../../config/load.ts';
import { KeysFileError, loadKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { configProblems } from '../helpers/config-errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-operator-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const problems = configProblems;

describe('config errors name the setting, the source, the value and what is allowed', () => {
  it('a typo in a file: file:line and the nearest known key', () => {
    const path = file('typo.yaml', 'server:\n  prot: 9000\n');
    expect(problems(() => loadConfig({ CONFIG_FILE: path }))).toEqual([
      `server.prot: unknown setting (${path}:2); did you mean server.port?`,
    ]);
  });

  it('a misspelt top-level section', () => {
    const path = file('section.yaml', 'cahce:\n  dataMaxBytes: 1\n');
    expect(problems(() => loadConfig({ CONFIG_FILE: path }))).toEqual([`cahce: unknown setting (${path}:1); did you mean cache?`]);
  });

  it('an unknown key with nothing close lists the known ones', () => {
    const path = file('far.yaml', 'upstream:\n  breaker:\n    zzzzzzzz: 1\n');
    expect(problems(() => loadConfig({ CONFIG_FILE: path }))).toEqual([
      `upstream.breaker.zzzzzzzz: unknown setting (${path}:3); known settings here: failureThreshold, openMs`,
    ]);
  });

  it('a wrong type', () => {
    const path = file('type.yaml', 'server:\n  port: eighty\n');
    expect(problems(() => loadConfig({ CONFIG_FILE: path }))).toEqual([
      `server.port: got "eighty" (${path}:2); expected an integer from 0 to 65_535`,
    ]);
  });

  it('an enum lists the allowed values', () => {
    const path = file('enum.yaml', '# comment\nlog:\n  level: loud\n');
    expect(problems(() => loadConfig({ CONFIG_FILE: path }))).toEqual([
      `log.level: got "loud" (${path}:3); expected one of: fatal, error, warn, info, debug, trace, silent`,
    ]);
  });

  it('a list item, with its index and line', () => {
    const path = file('list.yaml', 'routing:\n  markets:\n    US:\n      - yahoo\n      - ""\n');
    expect(problems(() => loadConfig({ CONFIG_FILE: path }))).toEqual([
      `routing.markets.US[1]: got "" (${path}:5); expected a non-empty string`,
    ]);
  });

  it('environment variables: an unknown MDQS__ path suggests the right variable; a bad value names the variable', () => {
    expect(problems(() => loadConfig({ MDQS__cache__dataMaxbytes: '1' }))).toEqual([
      'cache.dataMaxbytes: unknown setting (MDQS__cache__dataMaxbytes); did you mean MDQS__cache__dataMaxBytes?',
    ]);
    expect(problems(() => loadConfig({ PORT: 'http', LOG_LEVEL: 'verbose' }))).toEqual([
      'server.port: got "http" (PORT); expected an integer from 0 to 65_535',
      'log.level: got "verbose" (LOG_LEVEL); expected one of: fatal, error, warn, info, debug, trace, silent',
    ]);
    expect(problems(() => loadConfig({ MDQS__upstream__concurrency: '0' }))).toEqual([
      'upstream.concurrency: got 0 (MDQS__upstream__concurrency); expected an integer from 1 to 1024',
    ]);
  });

  it('every problem at once, files and variables together', () => {
    const path = file('many.yaml', 'server:\n  prot: 1\n  trustProxy: maybe\n');
    expect(problems(() => loadConfig({ CONFIG_FILE: path, MDQS__log__levl: 'info' }))).toEqual([
      `server.prot: unknown setting (${path}:2); did you mean server.port?`,
      'log.levl: unknown setting (MDQS__log__levl); did you mean MDQS__log__level?',
      `server.trustProxy: "maybe" is not an IP address, a CIDR (10.0.0.0/8) or one of loopback, linklocal, uniquelocal (${path}:3); `
        + 'expected true, false, a number of proxy hops, or the proxies\' addresses or CIDRs (a list or a comma-separated string)',
    ]);
  });

  it('a secret value is never echoed', () => {
    const msgs = problems(() => loadConfig({ MDQS__redis__url: '5', REDIS_URL: 'redis://:hunter2@h:1', MDQS__redis__fillLockMs: 'x' }));
    expect(msgs.join('\n')).not.toContain('hunter2');
  });

  it('the message starts with the count', () => {
    const path = file('msg.yaml', 'server:\n  prot: 9000\n');
    expect(() => loadConfig({ CONFIG_FILE: path })).toThrow(`invalid configuration (1 problem):\n  - server.prot: unknown setting (${path}:2); did you mean server.port?`);
  });
});

describe('CONFIG_FILE holds only what it changes', () => {
  it('a partial file is merged over config/default.yaml', () => {
    const path = file('partial.yaml', 'server:\n  port: 9090\ncache:\n  ttl:\n    quotes: { open: 500 }\nrouting:\n  markets:\n    US: [sim, sim]\n');
    const { config, file: used } = loadConfig({ CONFIG_FILE: path });
    const defaults = loadDefaultConfig();
    expect(used).toBe(path);
    expect(config.server).toEqual({ ...defaults.server, port: 9090 });
    expect(config.cache.ttl.quotes).toEqual({ open: 500, closed: defaults.cache.ttl.quotes.closed });
    expect(config.routing.markets).toEqual({ CN: ['sim'], HK: ['sim'], US: ['sim', 'sim'] });
    expect(config.log).toEqual(defaults.log);
  });

  it('environment wins over the file, which wins over the default', () => {
    const path = file('layers.yaml', 'server:\n  port: 9090\n  shutdownGraceMs: 5\n');
    const { config, sources } = loadConfig({ CONFIG_FILE: path, PORT: '9191' });
    expect(config.server.port).toBe(9191);
    expect(config.server.shutdownGraceMs).toBe(5);
    expect(sources.get('server/port')).toBe('PORT');
    expect(sources.get('server/shutdownGraceMs')).toBe(`${path}:3`);
    const line = readFileSync(DEFAULT_CONFIG_FILE, 'utf8').split('\n').findIndex((l) => l.startsWith('  bodyLimitBytes:')) + 1;
    expect(sources.get('server/bodyLimitBytes')).toBe(`config/default.yaml:${line}`);
  });

  it('an empty variable of a string setting is the empty string; of a number it is still refused', () => {
    expect(loadConfig({ MDQS__server__pidFile: '' }).config.server.pidFile).toBe('');
    expect(loadConfig({ MDQS__redis__url: '' }).config.redis.url).toBe('');
    expect(problems(() => loadConfig({ MDQS__server__port: '' }))).toEqual(['server.port: got null (MDQS__server__port); expected an integer from 0 to 65_535']);
  });

  it('an empty CONFIG_FILE is the default', () => {
    expect(loadConfig({ CONFIG_FILE: file('empty.yaml', '') }).config).toEqual(loadDefaultConfig());
  });

  it('lists replace, mappings merge', () => {
    expect(mergeConfig({ a: { b: 1, c: [1, 2] } }, { a: { c: [3] } })).toEqual({ a: { b: 1, c: [3] } });
  });

  it('a file that is not a mapping says so', () => {
    const path = file('scalar.yaml', '42\n');
    expect(problems(() => loadConfig({ CONFIG_FILE: path }))).toEqual([`${path}: expected a mapping of settings, got 42`]);
  });

  it('invalid YAML names the line', () => {
    const path = file('broken.yaml', 'server:\n  port: 1\n  host: [unclosed\n');
    expect(problems(() => loadConfig({ CONFIG_FILE: path }))[0]).toMatch(new RegExp(`^${path.replace(/[.]/g, '\\.')}:\\d+: not valid YAML: `));
  });
});

describe('nearest', () => {
  it.each([['prot', ['host', 'port'], 'port'], ['dataMaxbytes', ['dataMaxBytes', 'responseMaxBytes'], 'dataMaxBytes'], ['xyz', ['host', 'port'], undefined]])(
    '%s → %s', (key, candidates, expected) => expect(nearest(key, candidates)).toBe(expected));
});

const PLAN = 'plans:\n  basic:\n    markets: [CN]\n    features: [quotes]\n    rate_limit: { max: 10, window_ms: 60000 }\n    max_symbols: 5\n';

describe('the keys file', () => {
  it('is checked in one pass: schema, unknown keys, unknown plans and duplicate ids together, with lines', () => {
    const path = file('keys-bad.yaml', `${PLAN}    max_symbol: 3\nkeys:\n  - { id: a, plan: gold, sha256: ${sha256Hex('1')} }\n  - { id: a, plan: basic, sha256: ${sha256Hex('2')} }\n  - id: b\n    plan: basic\n    sha256: nothex\n`);
    let error: KeysFileError | undefined;
    try {
      loadKeysFile(path);
    } catch (e) {
      error = e as KeysFileError;
    }
    expect(error).toBeInstanceOf(KeysFileError);
    expect(error!.problems).toEqual([
      `plans.basic.max_symbol: unknown setting (${path}:7); did you mean plans.basic.max_symbols?`,
      `keys[2].sha256: got "nothex" (${path}:13); expected a string matching ^[0-9a-fA-F]{64}$`,
      `keys[0].plan: key a names unknown plan gold (${path}:9); plans: basic`,
      `keys[1].id: duplicate key id a (${path}:10); first used by keys[0]`,
    ]);
    expect(error!.message.split('\n')[0]).toBe(`invalid keys file ${path} (4 problems):`);
  });

  it('a missing keys file says it is the keys file and how to create one', () => {
    const path = join(dir, 'nowhere', 'keys.yaml');
    expect(() => loadKeysFile(path)).toThrow(
      `invalid keys file ${path} (1 problem):\n  - the keys file ${path} does not exist (it holds the plans and API key hashes; set its path with keys.file in the config or KEYS_FILE). `
      + `Create one from the example: cp config/keys.yaml ${path} (then remove its demo key), and add keys with npm run cli -- create-key --keys-file ${path} --id <label> --plan <plan>`,
    );
  });

  it('plans get the optional streaming and bars fields with their defaults', () => {
    const path = file('keys-plan.yaml', `${PLAN}    max_bars: 1000\nkeys: []\n`);
    const plan = loadKeysFile(path).plans.get('basic')!;
    expect([plan.maxSubscriptions, plan.maxConnections, plan.maxBars]).toEqual([200, 10, 1000]);
  });
});
