// Configuration loading (docs/configuration.md): the default file validates,
// environment variables override single settings, every problem is reported at once.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { applyEnv, ConfigError, DEFAULT_CONFIG_FILE, loadConfig, loadDefaultConfig, readYamlFile, validateConfig } from '../../config/load.ts';
import { configProblems } from '../helpers/config-errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const problemsOf = configProblems;

describe('loadDefaultConfig', () => {
  it('validates and carries the documented defaults', () => {
    const config = loadDefaultConfig();
    expect(config.server).toMatchObject({ host: 'auto', port: 8080 });
    expect(config.keys.file).toBe('config/keys.yaml');
    expect(config.routing.markets).toEqual({ CN: ['sim'], HK: ['sim'], US: ['sim'] });
    expect(config.cache.dataMaxBytes).toBe(268_435_456);
    expect(config.redis.url).toBe('');
    expect(config.log.level).toBe('info');
  });

  it('loadConfig with an empty environment equals the default file', () => {
    const { config, file } = loadConfig({});
    expect(file).toBe(DEFAULT_CONFIG_FILE);
    expect(config).toEqual(loadDefaultConfig());
  });
});

describe('applyEnv', () => {
  const raw = readYamlFile(DEFAULT_CONFIG_FILE) as Record<string, unknown>;

  it('PORT becomes a number, HOST stays a string (even when it looks like YAML)', () => {
    const out = applyEnv(raw, { PORT: '9090', HOST: '::1' }) as { server: { port: unknown; host: unknown } };
    expect(out.server.port).toBe(9090);
    expect(out.server.host).toBe('::1');
    expect(validateConfig(out).server).toMatchObject({ port: 9090, host: '::1' });
  });

  it('LOG_LEVEL, KEYS_FILE and REDIS_URL set their settings', () => {
    const out = validateConfig(applyEnv(raw, { LOG_LEVEL: 'warn', KEYS_FILE: '/etc/mdqs/keys.yaml', REDIS_URL: 'redis://127.0.0.1:6379' }));
    expect(out.log.level).toBe('warn');
    expect(out.keys.file).toBe('/etc/mdqs/keys.yaml');
    expect(out.redis.url).toBe('redis://127.0.0.1:6379');
  });

  it('MDQS__section__key sets any setting by path, parsed as YAML', () => {
    const out = validateConfig(applyEnv(raw, {
      MDQS__cache__dataMaxBytes: '268435457',
      MDQS__routing__markets__US: '[sim, sim]',
      MDQS__server__trustProxy: 'true',
    }));
    expect(out.cache.dataMaxBytes).toBe(268_435_457);
    expect(out.routing.markets.US).toEqual(['sim', 'sim']);
    expect(out.server.trustProxy).toBe(true);
  });

  it('nested adapter options (used by the e2e shutdown test)', () => {
    const out = validateConfig(applyEnv(raw, { MDQS__adapters__sim__latency__fixedMs: '1500' }));
    expect(out.adapters.sim).toMatchObject({ latency: { fixedMs: 1500 } });
  });

  it('empty and unrelated variables change nothing; the input is not mutated', () => {
    const before = structuredClone(raw);
    const out = applyEnv(raw, { PORT: '', HOST: '', PATH: '/usr/bin', MDQS: 'x', MDQS__: 'y' });
    expect(out).toEqual(before);
    applyEnv(raw, { PORT: '1', MDQS__cache__dataMaxBytes: '1' });
    expect(raw).toEqual(before);
  });
});

describe('invalid configuration reports every problem at once', () => {
  it('through environment overrides', () => {
    const problems = problemsOf(() => loadConfig({ PORT: '70000', LOG_LEVEL: 'loud', MDQS__cache__dataMaxBytes: '5' }));
    expect(problems.length).toBeGreaterThanOrEqual(3);
    expect(problems.some((p) => p === 'server.port: got 70000 (PORT); expected an integer from 0 to 65_535')).toBe(true);
    expect(problems.some((p) => p.startsWith('log.level: got "loud" (LOG_LEVEL)'))).toBe(true);
    expect(problems.some((p) => p.startsWith('cache.dataMaxBytes: got 5 (MDQS__cache__dataMaxBytes)'))).toBe(true);
  });

  it('ten bad numbers give ten problems (no cap on the report)', () => {
    const env = {
      PORT: '70000',
      MDQS__server__bodyLimitBytes: '1',
      MDQS__server__requestTimeoutMs: '1',
      MDQS__server__shutdownGraceMs: '-1',
      MDQS__cache__dataMaxBytes: '5',
      MDQS__cache__responseMaxBytes: '5',
      MDQS__cache__gzipMinBytes: '-1',
      MDQS__cache__ttl__negativeMs: '-1',
      MDQS__cache__ttl__referenceMs: '-1',
    };
    const problems = problemsOf(() => loadConfig(env));
    for (const path of ['server.port', 'server.bodyLimitBytes', 'server.requestTimeoutMs', 'server.shutdownGraceMs', 'cache.dataMaxBytes',
      'cache.responseMaxBytes', 'cache.gzipMinBytes', 'cache.ttl.negativeMs', 'cache.ttl.referenceMs']) {
      expect(problems.some((p) => p.startsWith(`${path}:`)), path).toBe(true);
    }
  });

  it('through CONFIG_FILE; the message lists them all', () => {
    const raw = readYamlFile(DEFAULT_CONFIG_FILE) as Record<string, Record<string, unknown>>;
    raw.server.port = 'eighty';
    raw.server.shutdownGraceMs = -1;
    // CONFIG_FILE is merged over the default file: a missing section is the default's, a misspelt one is an error.
    raw.auth = { failuresPerMinut: 5 };
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, stringify(raw));
    let error: ConfigError | undefined;
    try {
      loadConfig({ CONFIG_FILE: file });
    } catch (e) {
      error = e as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems.length).toBeGreaterThanOrEqual(3);
    for (const path of ['server.port', 'server.shutdownGraceMs', 'auth.failuresPerMinut']) {
      expect(error!.problems.some((p) => p.includes(path)), path).toBe(true);
      expect(error!.message).toContain(path);
    }
  });

  it('an unreadable file or invalid YAML is a ConfigError too', () => {
    expect(problemsOf(() => loadConfig({ CONFIG_FILE: join(dir, 'missing.yaml') }))[0]).toMatch(/cannot read/);
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, 'server: [unclosed\n');
    expect(problemsOf(() => loadConfig({ CONFIG_FILE: broken }))[0]).toMatch(/not valid YAML/);
  });
});
