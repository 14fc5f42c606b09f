// The shared fake adapter keeps the adapter contract the router checks (a method for each resource
// it declares, none for the others) and does what the tests lean on: counts and logs every call,
// fails in each mode, waits at the gate and on its delay only as long as the deadline allows.
import { afterEach, describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { Adapter } from '../../adapters/types.ts';
import { RESOURCE_DESCRIPTORS } from '../../src/data/resources/index.ts';
import { AppError } from '../../src/errors.ts';
import { checkRouting } from '../../src/upstream/routing-check.ts';
import { ref } from '../data/fakes.ts';
import { ALL_RESOURCES, createStandInVendor, fakeAdapter, fakeQuote, type StandInVendor } from './fake-adapter.ts';

const NOW = Date.UTC(2025, 5, 18, 2, 15, 30);
const MOUTAI = ref('600519.SH');
const EVERY_METHOD = [...new Set(RESOURCE_DESCRIPTORS.map((d) => d.method))];
const methodsOf = (adapter: Adapter) => EVERY_METHOD.filter((m) => typeof adapter[m] === 'function');
const routingErrors = (adapter: Adapter) =>
  checkRouting({ markets: { CN: [adapter.id], HK: [adapter.id], US: [adapter.id] }, overrides: {} }, new Map([[adapter.id, adapter]]), new Set()).errors;

/** How `promise` settles, without letting a rejection go unhandled. */
async function outcome(promise: Promise<unknown> | undefined): Promise<{ value?: unknown; error?: unknown }> {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}

const vendors: StandInVendor[] = [];
afterEach(async () => {
  await Promise.all(vendors.splice(0).map((v) => v.client.close()));
});

describe('the methods follow the declared resources', () => {
  it('scripted: every resource of the descriptors and each one\'s method, which the routing check accepts', () => {
    const fake = fakeAdapter('vendor');
    expect(Object.entries(fake.capabilities.resources).filter(([, on]) => on).map(([r]) => r)).toEqual(RESOURCE_DESCRIPTORS.map((d) => d.name));
    expect(methodsOf(fake)).toEqual(EVERY_METHOD);
    expect(routingErrors(fake)).toEqual([]);
  });

  it('scripted, declaring quotes and candles only: no other method', () => {
    const fake = fakeAdapter('vendor', { caps: { resources: { quotes: true, candles: true } } });
    expect(methodsOf(fake)).toEqual(['getQuotes', 'getCandles']);
    expect(fake.capabilities.resources.depth).toBe(false);
    expect(routingErrors(fake)).toEqual([]);
  });

  it('wrapping: an override narrows what the wrapped adapter serves, and cannot declare a method it lacks', () => {
    const sim = createSimAdapter({}, { now: () => NOW });
    const noDepth = fakeAdapter(sim, { caps: { resources: { ...ALL_RESOURCES, depth: false } } });
    expect(methodsOf(noDepth)).toEqual(methodsOf(sim).filter((m) => m !== 'getDepth'));
    const quotesOnly: Adapter = { id: 'q', label: 'q', capabilities: sim.capabilities, getQuotes: (refs, ctx) => sim.getQuotes(refs, ctx) };
    const fake = fakeAdapter(quotesOnly, { caps: { resources: ALL_RESOURCES } });
    expect(methodsOf(fake)).toEqual(['getQuotes']);
    expect(routingErrors(fake)).toEqual([]);
  });

  it('the HTTP stand-in serves CN quotes and has getQuotes only', () => {
    const vendor = createStandInVendor();
    vendors.push(vendor);
    expect(methodsOf(vendor.adapter)).toEqual(['getQuotes']);
    expect(vendor.adapter.capabilities.markets).toEqual(['CN']);
    expect(vendor.adapter.id).toBe('stand-in');
  });
});

describe('answers, counts and the log', () => {
  it('scripted: known symbols only, stamped with the current version', async () => {
    const fake = fakeAdapter('vendor', { known: ['600519.SH'] });
    fake.version = 4;
    const quotes = await fake.getQuotes!([MOUTAI, ref('000001.SZ')]);
    expect([...quotes]).toEqual([['600519.SH', fakeQuote('600519.SH', 4)]]);
    expect(await fake.getCandles!({ symbol: ref('000001.SZ'), period: '1d' })).toBeUndefined();
  });

  it('wrapping: the wrapped adapter\'s answer; each call logged with its symbols, deadline signal and settle time', async () => {
    const sim = createSimAdapter({}, { now: () => NOW });
    const fake = fakeAdapter(sim, { id: 'vendor' });
    const signal = new AbortController().signal;
    expect(await fake.getQuotes!([MOUTAI], { signal })).toEqual(await sim.getQuotes([MOUTAI]));
    await fake.getCandles!({ symbol: MOUTAI, period: '1d', count: 3 });
    expect(fake.id).toBe('vendor');
    expect(fake.calls.map((c) => [c.method, c.symbols, c.signal])).toEqual([['getQuotes', ['600519.SH'], signal], ['getCandles', ['600519.SH'], undefined]]);
    expect(fake.calls.every((c) => typeof c.settledAt === 'number')).toBe(true);
    expect([fake.calls.getQuotes, fake.calls.getDepth, fake.count()]).toEqual([1, 0, 2]);
    expect(fake.log).toBe(fake.calls);
    fake.reset();
    expect(fake.calls).toEqual([]);
    expect(fake.count('getQuotes')).toBe(0);
  });
});

describe('failures', () => {
  it.each([
    ['error', 'UPSTREAM_ERROR'],
    ['malformed', 'UPSTREAM_BAD_RESPONSE'],
    ['unavailable', 'UPSTREAM_UNAVAILABLE'],
  ] as const)('mode %s: %s, counted', async (mode, reason) => {
    const fake = fakeAdapter('vendor', { known: ['600519.SH'], retryAfterSeconds: 3 });
    fake.mode = mode;
    const { error } = await outcome(fake.getQuotes!([MOUTAI]));
    expect(error).toMatchObject({ reason, details: { adapter: 'vendor' } });
    if (mode === 'unavailable') expect((error as AppError).retryAfterSeconds).toBe(3);
    expect(fake.calls.getQuotes).toBe(1);
  });

  it('a given error is thrown as it is; a failing symbol fails its call whatever the mode', async () => {
    const fake = fakeAdapter('vendor', { known: ['600519.SH', '000001.SZ'] });
    const down = new AppError('UPSTREAM_TIMEOUT', 'slow');
    fake.failing.set('000001.SZ', down);
    expect((await outcome(fake.getQuotes!([MOUTAI, ref('000001.SZ')]))).error).toBe(down);
    expect((await outcome(fake.getQuotes!([MOUTAI]))).value).toBeInstanceOf(Map);
    fake.mode = new TypeError('bug');
    expect((await outcome(fake.getQuotes!([MOUTAI]))).error).toBe(fake.mode);
  });

  it('hang: until the deadline signal aborts, then its reason', async () => {
    const fake = fakeAdapter('vendor', { mode: 'hang' });
    const deadline = new AbortController();
    const call = outcome(fake.getQuotes!([MOUTAI], { signal: deadline.signal }));
    const reason = new AppError('UPSTREAM_TIMEOUT', 'deadline');
    deadline.abort(reason);
    expect((await call).error).toBe(reason);
  });
});

describe('waiting', () => {
  it('hold: calls are recorded on entry and answer on release; an aborted deadline ends the wait', async () => {
    const fake = fakeAdapter('vendor', { known: ['600519.SH'] });
    fake.hold();
    let settled = false;
    const held = fake.getQuotes!([MOUTAI]).then((v) => { settled = true; return v; });
    const deadline = new AbortController();
    const cut = outcome(fake.getQuotes!([MOUTAI], { signal: deadline.signal }));
    await new Promise((resolve) => setImmediate(resolve));
    expect([fake.count(), settled]).toEqual([2, false]);
    deadline.abort();
    expect((await cut).error).toMatchObject({ name: 'AbortError' });
    fake.release();
    expect((await held).get('600519.SH')).toEqual(fakeQuote('600519.SH', 1));
  });

  it('delay: answers after delayMs, or fails when the deadline comes first', async () => {
    const fake = fakeAdapter('vendor', { known: ['600519.SH'], delayMs: 40 });
    const started = performance.now();
    await fake.getQuotes!([MOUTAI]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(35);
    const { error } = await outcome(fake.getQuotes!([MOUTAI], { signal: AbortSignal.timeout(5) }));
    expect(error).toMatchObject({ name: 'TimeoutError' });
  });
});
