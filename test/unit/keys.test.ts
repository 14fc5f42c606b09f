// API keys (docs/contract.md#access-keys-plans-rate-limits): keys file validation, constant-time lookup, reload, key creation.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';

const spy = vi.hoisted(() => ({ calls: [] as [Buffer, Buffer][] }));
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return {
    ...actual,
    timingSafeEqual: (a: Buffer, b: Buffer) => {
      spy.calls.push([Buffer.from(a), Buffer.from(b)]);
      return actual.timingSafeEqual(a, b);
    },
  };
});

const { KeyStore, generateKey, parseKeysFile, sha256Hex } = await import('../../src/access/keys.ts');
const { createKey } = await import('../../src/access/create-key.ts');

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mdqs-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PLAN = { markets: ['CN'], features: ['quotes'], rate_limit: { max: 10, window_ms: 60000 }, max_symbols: 5 };
const file = (keys: unknown[], plans: Record<string, unknown> = { basic: PLAN }) => ({ plans, keys });

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected an error');
}

describe('sha256Hex', () => {
  it('is the hex SHA-256 of the key (the keys-file example of docs/contract.md: "test")', () => {
    expect(sha256Hex('test')).toBe('9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08');
    expect(sha256Hex('demo-key')).toBe('c48a01f49fd0f2cc404bc3cbbc80e91457a3d41bb429a695243de4c61794155c');
  });
});

describe('parseKeysFile', () => {
  it('builds plans and keys', () => {
    const snap = parseKeysFile(file([{ id: 'a', plan: 'basic', sha256: sha256Hex('k1') }]));
    expect([...snap.plans.keys()]).toEqual(['basic']);
    const plan = snap.plans.get('basic')!;
    expect({ ...plan, markets: [...plan.markets], features: [...plan.features] }).toEqual({
      name: 'basic', markets: ['CN'], features: ['quotes'], rateLimit: { max: 10, windowMs: 60000 }, maxSymbols: 5,
      maxSubscriptions: 200, maxConnections: 10, maxBars: 500_000,
    });
    const entry = snap.byHash.get(sha256Hex('k1'))!;
    expect(entry.id).toBe('a');
    expect(entry.demo).toBe(false);
  });

  it('rejects a key naming an unknown plan', () => {
    expect(errorOf(() => parseKeysFile(file([{ id: 'a', plan: 'gold', sha256: sha256Hex('k') }]), 'keys.yaml')))
      .toContain('key a names unknown plan gold');
  });

  it('rejects duplicate key ids', () => {
    const msg = errorOf(() => parseKeysFile(file([
      { id: 'a', plan: 'basic', sha256: sha256Hex('k1') },
      { id: 'a', plan: 'basic', sha256: sha256Hex('k2') },
    ])));
    expect(msg).toContain('duplicate key id a');
  });

  it('rejects one hash under two ids, naming both, whatever the case of the hex (issue 42, item 4)', () => {
    const msg = errorOf(() => parseKeysFile(file([
      { id: 'weak', plan: 'basic', sha256: sha256Hex('shared') },
      { id: 'other', plan: 'basic', sha256: sha256Hex('k2') },
      { id: 'full', plan: 'gold', sha256: sha256Hex('shared').toUpperCase() },
    ], { basic: PLAN, gold: { ...PLAN, markets: ['CN', 'HK', 'US'] } }), 'keys.yaml'));
    expect(msg).toBe('invalid keys file keys.yaml (1 problem):\n'
      + '  - keys[2].sha256: key full has the same hash as key weak (keys[0]); one key cannot belong to two ids: give each its own key (create-key) or remove one entry');
  });

  it('a hash repeated with other problems is one more problem in the same report', () => {
    const msg = errorOf(() => parseKeysFile(file([
      { id: 'a', plan: 'basic', sha256: sha256Hex('k1') },
      { id: 'a', plan: 'basic', sha256: sha256Hex('k1') },
    ])));
    expect(msg.split('\n')[0]).toBe('invalid keys file (2 problems):');
    expect(msg).toContain('keys[1].sha256: key a has the same hash as key a (keys[0])');
    expect(msg).toContain('keys[1].id: duplicate key id a');
  });

  it.each(['abc', sha256Hex('k').slice(1), `${sha256Hex('k')}0`, `${sha256Hex('k').slice(1)}g`, ''])('rejects a bad hash %j', (sha256) => {
    expect(errorOf(() => parseKeysFile(file([{ id: 'a', plan: 'basic', sha256 }]), 'keys.yaml'))).toMatch(/^invalid keys file keys\.yaml \(1 problem\):\n  - keys\[0\]\.sha256: got .*; expected a string matching \^\[0-9a-fA-F\]\{64\}\$$/);
  });

  it('rejects unknown markets and features and reports every problem at once', () => {
    const msg = errorOf(() => parseKeysFile(file([
      { id: 'a', plan: 'gold', sha256: sha256Hex('k1') },
      { id: 'a', plan: 'basic', sha256: sha256Hex('k2') },
    ])));
    expect(msg).toContain('unknown plan gold');
    expect(msg).toContain('duplicate key id a');
    expect(errorOf(() => parseKeysFile(file([], { p: { ...PLAN, markets: ['JP'] } })))).toContain('plans.p.markets[0]: got "JP"; expected one of: CN, HK, US');
    expect(errorOf(() => parseKeysFile(file([], { p: { ...PLAN, features: ['realtime'] } })))).toContain('plans.p.features[0]: got "realtime"; expected one of: quotes, pools, depth, klines_daily, klines_minute, intraday, ex_factors, instruments, financials, batch');
  });

  it('accepts an upper-case hash', () => {
    const snap = parseKeysFile(file([{ id: 'a', plan: 'basic', sha256: sha256Hex('k1').toUpperCase() }]));
    expect(new KeyStore(snap).lookup('k1')?.id).toBe('a');
  });
});

describe('KeyStore.lookup', () => {
  const store = new KeyStore(parseKeysFile(file([
    { id: 'a', plan: 'basic', sha256: sha256Hex('key-a') },
    { id: 'd', plan: 'basic', sha256: sha256Hex('key-d'), demo: true },
  ])));

  it('finds a key by its hash and confirms it with timingSafeEqual on the digests', () => {
    spy.calls.length = 0;
    const entry = store.lookup('key-a');
    expect(entry?.id).toBe('a');
    expect(entry?.plan.name).toBe('basic');
    expect(spy.calls.length).toBe(1);
    const [stored, presented] = spy.calls[0];
    expect(stored.toString('hex')).toBe(sha256Hex('key-a'));
    expect(presented.toString('hex')).toBe(sha256Hex('key-a'));
  });

  it('an unknown key is undefined; the raw key never reaches a comparison', () => {
    spy.calls.length = 0;
    for (const k of ['key-b', 'KEY-A', 'key-a ', '', sha256Hex('key-a')]) expect(store.lookup(k)).toBeUndefined();
    for (const [a, b] of spy.calls) {
      expect(a.length).toBe(32);
      expect(b.length).toBe(32);
    }
  });

  it('reports demo keys and its size', () => {
    expect(store.demoKeyIds).toEqual(['d']);
    expect(store.size).toBe(2);
  });
});

describe('KeyStore.reload', () => {
  it('swaps the keys from the file; a broken file keeps the previous keys', () => {
    const path = join(dir, 'reload.yaml');
    writeFileSync(path, stringify(file([{ id: 'old', plan: 'basic', sha256: sha256Hex('old-key') }])));
    const store = KeyStore.fromFile(path);
    expect(store.path).toBe(path);
    expect(store.lookup('old-key')?.id).toBe('old');
    writeFileSync(path, stringify(file([{ id: 'new', plan: 'basic', sha256: sha256Hex('new-key') }])));
    expect(store.lookup('new-key')).toBeUndefined();
    store.reload();
    expect(store.lookup('new-key')?.id).toBe('new');
    expect(store.lookup('old-key')).toBeUndefined();
    writeFileSync(path, 'plans: {}\nkeys: [{ id: x, plan: nope, sha256: zz }]\n');
    expect(() => store.reload()).toThrow();
    expect(store.lookup('new-key')?.id).toBe('new');
    // One hash under two ids: refused, the previous keys kept (never the later entry winning).
    writeFileSync(path, stringify(file([
      { id: 'new', plan: 'basic', sha256: sha256Hex('new-key') },
      { id: 'thief', plan: 'basic', sha256: sha256Hex('new-key') },
    ])));
    expect(() => store.reload()).toThrow('key thief has the same hash as key new (keys[0])');
    expect(store.lookup('new-key')?.id).toBe('new');
  });

  it('a store built without a path reloads to itself', () => {
    const store = new KeyStore(parseKeysFile(file([{ id: 'a', plan: 'basic', sha256: sha256Hex('k') }])));
    store.reload();
    expect(store.lookup('k')?.id).toBe('a');
  });
});

describe('createKey', () => {
  it('appends only the hash of a fresh key to a copy of config/keys.yaml, keeping its comments', () => {
    const path = join(dir, 'create.yaml');
    copyFileSync(join(ROOT, 'config/keys.yaml'), path);
    const key = createKey(path, 'research-team', 'basic');
    expect(key).toMatch(/^mdqs_[A-Za-z0-9_-]{43}$/);
    const text = readFileSync(path, 'utf8');
    expect(text).toContain(sha256Hex(key));
    expect(text).not.toContain(key);
    expect(text).toContain('DEMO KEY, FOR LOCAL USE ONLY');
    const store = KeyStore.fromFile(path);
    expect(store.lookup(key)?.id).toBe('research-team');
    expect(store.lookup(key)?.plan.name).toBe('basic');
    expect(store.lookup('demo-key')?.id).toBe('demo');
    expect(createKey(path, 'second', 'demo')).not.toBe(key);
  });

  it('refuses an unknown plan or a taken id and leaves the file unchanged', () => {
    const path = join(dir, 'refuse.yaml');
    copyFileSync(join(ROOT, 'config/keys.yaml'), path);
    const before = readFileSync(path, 'utf8');
    expect(() => createKey(path, 'x', 'gold')).toThrow(/unknown plan 'gold'/);
    expect(() => createKey(path, 'demo', 'basic')).toThrow(/already exists/);
    expect(readFileSync(path, 'utf8')).toBe(before);
  });

  it('generateKey gives distinct keys', () => {
    expect(generateKey()).not.toBe(generateKey());
  });

  it('the CLI prints the key once on stdout and stores only its hash', () => {
    const path = join(dir, 'cli.yaml');
    copyFileSync(join(ROOT, 'config/keys.yaml'), path);
    const stdout = execFileSync(process.execPath, ['src/cli.ts', 'create-key', '--id', 'cli-team', '--plan', 'basic', '--keys-file', path], {
      cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
    });
    const key = stdout.trim();
    expect(stdout).toBe(`${key}\n`);
    expect(key).toMatch(/^mdqs_/);
    const text = readFileSync(path, 'utf8');
    expect(text).toContain(sha256Hex(key));
    expect(text).not.toContain(key);
    expect(KeyStore.fromFile(path).lookup(key)?.id).toBe('cli-team');
  });
});
