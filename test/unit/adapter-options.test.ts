// Issue 23 item 5: vendor options are checked like every other setting. Each adapter's options
// schema (adapters/<type>/options.ts) is walked by config/validate.ts through config/adapters.ts:
// unknown and out-of-range options, adapter ids that are no adapter and an http block for an
// adapter that makes no HTTP calls are problems with file:line (or variable) and the nearest name;
// no vendor gets another vendor's HTTP defaults.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { Errors } from 'typebox/schema';
import { Settings } from 'typebox/system';
import { afterAll, describe, expect, it } from 'vitest';
import { ADAPTER_TYPES, withAdapterBlocks } from '../../config/adapters.ts';
import { loadConfig } from '../../config/load.ts';
import { ConfigSchema } from '../../config/schema.ts';
import { schemaErrors } from '../../config/validate.ts';
import { DEFAULT_MEMO_MAX_BYTES, MIN_MEMO_MAX_BYTES } from '../../adapters/sim/memo.ts';
import { SIM_DEFAULTS } from '../../adapters/sim/options.ts';
import { createAdapters, productionDeps, resilienceSettings } from '../../src/upstream/registry.ts';
import { configProblems as problems } from '../helpers/config-errors.ts';

Settings.Set({ maxErrors: 100_000 });

const dir = mkdtempSync(join(tmpdir(), 'mdqs-adapter-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('adapter ids', () => {
  it('an unknown id in a routing chain: file:line and the nearest adapter (check-config said ok, the boot crashed)', () => {
    const path = file('chain.yaml', 'routing:\n  markets:\n    US: [yahooo]\n');
    expect(problems(() => loadConfig({ CONFIG_FILE: path }))).toEqual([
      `routing.markets.US[0]: unknown adapter yahooo (${path}:3); did you mean yahoo?`,
    ]);
  });

  it('in overrides, in history.disabledAdapters, from a variable; nothing near lists the adapters', () => {
    const path = file('overrides.yaml', 'routing:\n  overrides:\n    depth:\n      US:\n        - eastmony\nhistory:\n  disabledAdapters: [zzzzzz]\n');
    expect(problems(() => loadConfig({ CONFIG_FILE: path, MDQS__routing__markets__CN: '[sim, tickflw]' }))).toEqual([
      'routing.markets.CN[1]: unknown adapter tickflw (MDQS__routing__markets__CN); did you mean tickflow?',
      `routing.overrides.depth.US[0]: unknown adapter eastmony (${path}:5); did you mean eastmoney?`,
      `history.disabledAdapters[0]: unknown adapter zzzzzz (${path}:7); adapters: sim, tickflow, eastmoney, yahoo; another id needs an adapters.zzzzzz block with a type`,
    ]);
  });

  it('a block whose id is no adapter and that sets no type; a type that is no adapter', () => {
    const path = file('blocks.yaml', 'adapters:\n  yahooo:\n    maxBatch: 5\n  backup:\n    type: simm\nrouting:\n  markets:\n    US: [yahooo, backup]\n');
    expect(problems(() => loadConfig({ CONFIG_FILE: path }))).toEqual([
      `adapters.yahooo: unknown adapter yahooo (${path}:2); did you mean adapters.yahoo?`,
      `adapters.backup.type: unknown adapter type simm (${path}:5); did you mean sim?`,
    ]);
  });

  it('another id runs a known adapter with `type`, and its block is checked against that adapter\'s options', () => {
    const ok = file('alias.yaml', 'routing:\n  markets:\n    CN: [tf-free, sim]\nadapters:\n  tf-free:\n    type: tickflow\n    baseUrl: https://free-api.tickflow.org\n');
    expect(loadConfig({ CONFIG_FILE: ok }).config.adapters['tf-free']).toEqual({ type: 'tickflow', baseUrl: 'https://free-api.tickflow.org' });
    const bad = file('alias-bad.yaml', 'routing:\n  markets:\n    CN: [tf-free]\nadapters:\n  tf-free:\n    type: tickflow\n    maxBatch: 5000\n    memoMaxBytes: 1\n');
    expect(problems(() => loadConfig({ CONFIG_FILE: bad }))).toEqual([
      `adapters.tf-free.memoMaxBytes: unknown setting (${bad}:8); known settings here: type, baseUrl, apiKey, maxBatch, volumeMultiplier, minuteLabels, maxKlinePages, tier, label, push, pushReconnectMs, http`,
      `adapters.tf-free.maxBatch: got 5000 (${bad}:7); expected an integer from 1 to 1000`,
    ]);
  });
});

describe('vendor options', () => {
  it('unknown and out-of-range options, nested ones included, every problem at once', () => {
    const path = file('options.yaml', [
      'adapters:',
      '  sim:',
      '    memoMaxBytes: 5',
      '    latency: { fixedMs: -1, jitterMs: 3 }',
      '    faults: { errorRate: 1.5 }',
      '  yahoo:',
      '    maxbatch: 3',
      '    minuteDaysPerRequest: 8',
      '    http: { timeoutMs: 10, retry: { maxRetries: 2 } }',
      '  eastmoney:',
      '    usMarkets: { AAPL: 105, BRK.B: 108 }',
      '    quoteHosts: [push2.eastmoney.com]',
      '  tickflow:',
      '    tier: gold',
      '',
    ].join('\n'));
    expect(problems(() => loadConfig({ CONFIG_FILE: path }))).toEqual([
      `adapters.sim.latency.jitterMs: unknown setting (${path}:4); known settings here: fixedMs, randomMs`,
      `adapters.yahoo.maxbatch: unknown setting (${path}:7); did you mean adapters.yahoo.maxBatch?`,
      `adapters.sim.latency.fixedMs: got -1 (${path}:4); expected a number from 0 to 600_000`,
      `adapters.sim.faults.errorRate: got 1.5 (${path}:5); expected a number from 0 to 1`,
      `adapters.sim.memoMaxBytes: got 5 (${path}:3); expected an integer from 4_194_304 to 68_719_476_736`,
      `adapters.yahoo.minuteDaysPerRequest: got 8 (${path}:8); expected an integer from 1 to 7`,
      `adapters.yahoo.http.timeoutMs: got 10 (${path}:9); expected an integer from 50 to 120_000`,
      `adapters.yahoo.http.retry.maxRetries: got 2 (${path}:9); expected one of: 0, 1`,
      `adapters.eastmoney.quoteHosts[0]: got "push2.eastmoney.com" (${path}:12); expected a string matching ^https?://[^\\s/]+`,
      `adapters.eastmoney.usMarkets.BRK.B: got 108 (${path}:11); expected one of: 105, 106, 107`,
      `adapters.tickflow.tier: got "gold" (${path}:14); expected one of: paid, free`,
    ]);
  });

  it('an http block for an adapter that makes no HTTP calls is refused, not silently used', () => {
    const path = file('sim-http.yaml', 'adapters:\n  sim:\n    http: { timeoutMs: 100 }\n');
    expect(problems(() => loadConfig({ CONFIG_FILE: path }))).toEqual([
      `adapters.sim.http: sim makes no HTTP calls (${path}:3); its deadline and breaker are upstream.deadlineMs and upstream.breaker`,
    ]);
  });

  it('environment overrides of vendor options are checked too; a secret of digits stays a string', () => {
    expect(problems(() => loadConfig({ MDQS__adapters__sim__syntheticUniverse: '-3', MDQS__adapters__tickflow__apiKey: '0123' }))).toEqual([
      'adapters.sim.syntheticUniverse: got -3 (MDQS__adapters__sim__syntheticUniverse); expected an integer from 0 to 1_000_000',
    ]);
    expect(loadConfig({ MDQS__adapters__tickflow__apiKey: '0123' }).config.adapters.tickflow).toEqual({ apiKey: '0123' });
  });

  it('a secret is never echoed, whatever its type', () => {
    const path = file('secret.yaml', 'adapters:\n  tickflow:\n    apiKey: 918273645\n');
    expect(problems(() => loadConfig({ CONFIG_FILE: path }))).toEqual([
      `adapters.tickflow.apiKey: got "***" (${path}:3); expected a string`,
    ]);
  });

  it('the shipped configs pass', () => {
    expect(() => loadConfig({})).not.toThrow();
    const example = fileURLToPath(new URL('../../config/vendors.example.yaml', import.meta.url));
    expect(() => loadConfig({ CONFIG_FILE: example })).not.toThrow();
  });

  it('the sim schema\'s memo bounds are the memo\'s own', () => {
    expect([SIM_DEFAULTS.memoMaxBytes, SIM_DEFAULTS.memoMinBytes]).toEqual([DEFAULT_MEMO_MAX_BYTES, MIN_MEMO_MAX_BYTES]);
  });
});

describe('every adapter block schema against TypeBox', () => {
  const value = fc.letrec((tie) => ({
    leaf: fc.oneof(fc.integer({ min: -2, max: 5000 }), fc.double(), fc.constantFrom(0, 1, 105, 108, 4_194_304), fc.boolean(), fc.constant(null),
      fc.constantFrom('', 'x', 'end', 'free', 'https://h', 'ftp://h')),
    any: fc.oneof({ depthSize: 'small' }, tie('leaf'), fc.array(tie('any'), { maxLength: 2 }), fc.dictionary(fc.constantFrom('CN', 'US', 'x'), tie('any'), { maxKeys: 2 })),
  })).any;

  it.each(Object.keys(ADAPTER_TYPES))('%s: the same errors in the same order (every option and http setting, random values)', (type) => {
    const schema = (withAdapterBlocks(ConfigSchema, { adapters: { [type]: {} } }).properties.adapters as { properties: Record<string, unknown> }).properties[type];
    const keys = Object.keys((schema as { properties: object }).properties);
    const typebox = (v: unknown) => Errors(schema as never, v)[1].map((e) => [e.keyword, e.instancePath]);
    const ours = (v: unknown) => schemaErrors(schema, v).map((e) => [e.keyword, e.instancePath]);
    fc.assert(fc.property(fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 4 }), (block) => {
      expect(ours(block)).toEqual(typebox(block));
    }), { numRuns: 400, seed: 23 });
  });
});

describe('each vendor gets its own HTTP defaults', () => {
  const UPSTREAM = { deadlineMs: 5_000, concurrency: 16, breaker: { failureThreshold: 5, openMs: 30_000 } };

  it('budget and deadline per vendor, under its own id or another (no fallback to another vendor\'s)', async () => {
    const deps = productionDeps(() => 0);
    const blocks = { 'yahoo-2': { type: 'yahoo' }, 'em-2': { type: 'eastmoney' } };
    const adapters = createAdapters({ markets: { CN: ['tickflow', 'eastmoney', 'em-2'], HK: ['sim'], US: ['yahoo', 'yahoo-2'] }, overrides: {} }, blocks, deps);
    expect([...adapters.keys()]).toEqual(['tickflow', 'eastmoney', 'em-2', 'sim', 'yahoo', 'yahoo-2']);
    const budgets = Object.fromEntries([...deps.clients].map(([id, client]) => [id, client.budgetRemaining()]));
    expect(budgets).toEqual({ tickflow: 600, eastmoney: 300, 'em-2': 300, yahoo: 120, 'yahoo-2': 120 });
    expect(['tickflow', 'eastmoney', 'em-2', 'sim', 'yahoo', 'yahoo-2'].map((id) => resilienceSettings(id, blocks[id as keyof typeof blocks], UPSTREAM).deadlineMs))
      .toEqual([8000, 5000, 5000, 5000, 8000, 8000]);
    await Promise.all([...deps.clients.values()].map((c) => c.close()));
  });
});
