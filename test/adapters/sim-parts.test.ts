// The sim adapter's small pure parts: seeded randomness, tick grids, A-share limits, corporate
// action arithmetic, largest-remainder splitting, and latency/fault injection.
import { describe, expect, it } from 'vitest';
import { isAppError, type AppError } from '../../src/errors.ts';
import { KNOWN_SPLITS, planActions, realiseAction } from '../../adapters/sim/actions.ts';
import { createFaultInjector } from '../../adapters/sim/faults.ts';
import { findSimInstrument } from '../../adapters/sim/instruments.ts';
import { limitPercent, limitPrices } from '../../adapters/sim/limits.ts';
import { largestRemainder } from '../../adapters/sim/minute.ts';
import { createRng, hashString, rngFor, seedOf } from '../../adapters/sim/random.ts';
import { onGrid, roundToTick, snapClampAt, stepDown, stepUp, tickSizeAt } from '../../adapters/sim/ticks.ts';
import { ref, simAt, WED_MORNING } from './sim-fixtures.ts';

const CN = { region: 'CN', type: 'stock' } as const;
const ETF = { region: 'CN', type: 'etf' } as const;
const HK = { region: 'HK', type: 'stock' } as const;
const US = { region: 'US', type: 'stock' } as const;

describe('sim random', () => {
  it('is a pure function of its seed', () => {
    const a = rngFor('600519.SH', 20250618, 'bar');
    const b = rngFor('600519.SH', 20250618, 'bar');
    const first = [a.next(), a.normal(), a.int(1, 6), a.range(2, 3)];
    expect([b.next(), b.normal(), b.int(1, 6), b.range(2, 3)]).toEqual(first);
    expect(rngFor('600519.SH', 20250619, 'bar').next()).not.toBe(first[0]);
    expect(seedOf('x', 1)).toBe(seedOf('x', 1));
    expect(seedOf('x', 1)).not.toBe(seedOf('x', 2));
    // FNV-1a + murmur finaliser and mulberry32 in 32-bit integer maths: fixed values on every machine.
    expect(hashString('')).toBe(2872998923);
    expect(hashString('AAPL.US')).toBe(2025119099);
    expect(rngFor('600519.SH', 20250618, 'bar').next()).toBe(0.42624479718506336);
  });

  it('restarts a sequence on reseed and draws sensible distributions', () => {
    const rng = createRng(42);
    const head = [rng.next(), rng.next()];
    rng.reseed(42);
    expect([rng.next(), rng.next()]).toEqual(head);
    let sum = 0;
    let squares = 0;
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const z = rng.normal();
      sum += z;
      squares += z * z;
    }
    expect(Math.abs(sum / n)).toBeLessThan(0.05);
    expect(Math.abs(squares / n - 1)).toBeLessThan(0.05);
    for (let i = 0; i < 1000; i++) {
      const u = rng.next();
      expect(u >= 0 && u < 1).toBe(true);
      const k = rng.int(3, 5);
      expect([3, 4, 5]).toContain(k);
    }
  });
});

describe('sim ticks', () => {
  it('snapClampAt is roundToTick then a clamp to the limits, in place (what the daily walk uses)', () => {
    const rng = createRng(5);
    const px = new Float64Array(3);
    let clamped = 0;
    for (const rules of [CN, ETF, US, HK]) {
      for (let i = 0; i < 2000; i++) {
        const price = 0.05 + rng.next() * 600;
        const mode = (['nearest', 'up', 'down'] as const)[i % 3];
        const floor = rng.next() < 0.2 ? price * 1.01 : 0;
        const ceiling = rng.next() < 0.2 ? price * 0.99 : Infinity;
        px[0] = price;
        px[1] = floor;
        px[2] = ceiling;
        snapClampAt(rules, px, 0, mode, 1, 2);
        const snapped = roundToTick(rules, price, mode);
        const expected = snapped < floor ? floor : snapped > ceiling ? ceiling : snapped;
        expect(px[0]).toBe(expected);
        if (expected !== snapped) clamped++;
      }
    }
    expect(clamped).toBeGreaterThan(500);
  });

  it('uses 0.01 for A-shares, 0.001 for A-share ETFs, 0.01/0.0001 for US', () => {
    expect(tickSizeAt(CN, 1688)).toBe(0.01);
    expect(tickSizeAt(ETF, 4.123)).toBe(0.001);
    expect(tickSizeAt(US, 270)).toBe(0.01);
    expect(tickSizeAt(US, 0.5)).toBe(0.0001);
    expect(roundToTick(CN, 10.005)).toBe(10.01);
    expect(roundToTick(CN, 10.004)).toBe(10);
    expect(roundToTick(ETF, 4.1235)).toBe(4.124);
    expect(roundToTick(US, 0.123456)).toBe(0.1235);
    expect(roundToTick(CN, 10.001, 'up')).toBe(10.01);
    expect(roundToTick(CN, 10.009, 'down')).toBe(10);
    expect(stepUp(US, 0.9999)).toBe(1);
    expect(stepDown(US, 1)).toBe(0.9999);
    expect(stepDown(CN, 0.01)).toBeUndefined();
  });

  it('follows the HKEX spread table across band edges', () => {
    expect([0.2, 0.25, 0.3, 0.5, 5, 10, 15, 20, 50, 150, 300, 600, 1500, 3000, 6000].map((p) => tickSizeAt(HK, p))).toEqual([
      0.001, 0.001, 0.005, 0.005, 0.01, 0.01, 0.02, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5,
    ]);
    expect(stepUp(HK, 10)).toBe(10.02);
    expect(stepDown(HK, 10.02)).toBe(10);
    expect(stepDown(HK, 10)).toBe(9.99);
    expect(stepUp(HK, 199.9)).toBe(200);
    expect(stepUp(HK, 200)).toBe(200.2);
    expect(stepDown(HK, 200)).toBe(199.9);
    expect(roundToTick(HK, 462.33)).toBe(462.4);
    expect(roundToTick(HK, 10.013)).toBe(10.02);
    expect(onGrid(HK, 10.01)).toBe(false);
    expect(onGrid(HK, 9.99)).toBe(true);
  });
});

describe('sim limits', () => {
  const stock = (code: string, exchange: 'SH' | 'SZ' | 'BJ', extra: { st?: boolean; type?: 'stock' | 'etf' } = {}) =>
    ({ region: 'CN', exchange, code, type: extra.type ?? 'stock', st: extra.st }) as const;

  it('sets the percentage by board', () => {
    expect(limitPercent(stock('600519', 'SH'))).toBe(10);
    expect(limitPercent(stock('000001', 'SZ'))).toBe(10);
    expect(limitPercent(stock('000656', 'SZ', { st: true }))).toBe(5);
    expect(limitPercent(stock('300750', 'SZ'))).toBe(20);
    expect(limitPercent(stock('301269', 'SZ'))).toBe(20);
    expect(limitPercent(stock('688981', 'SH'))).toBe(20);
    expect(limitPercent(stock('430047', 'BJ'))).toBe(30);
    expect(limitPercent(stock('510300', 'SH', { type: 'etf' }))).toBe(10);
    expect(limitPercent({ region: 'HK', exchange: 'HK', code: '00700', type: 'stock' })).toBeUndefined();
    expect(limitPrices({ region: 'US', exchange: 'US', code: 'AAPL', type: 'stock' }, 200)).toBeUndefined();
  });

  it('rounds prev_close × (1 ± p) half up on the tick grid, exactly', () => {
    expect(limitPrices(stock('600000', 'SH'), 10.05)).toEqual({ up: 11.06, down: 9.05 });
    expect(limitPrices(stock('600000', 'SH'), 9.78)).toEqual({ up: 10.76, down: 8.8 });
    expect(limitPrices(stock('000656', 'SZ', { st: true }), 1.8)).toEqual({ up: 1.89, down: 1.71 });
    expect(limitPrices(stock('300750', 'SZ'), 250.55)).toEqual({ up: 300.66, down: 200.44 });
    expect(limitPrices(stock('430047', 'BJ'), 16.01)).toEqual({ up: 20.81, down: 11.21 });
    expect(limitPrices(stock('510300', 'SH', { type: 'etf' }), 4.005)).toEqual({ up: 4.406, down: 3.605 });
  });
});

describe('sim corporate actions', () => {
  it('matches the worked example of docs/vendors.md', () => {
    // D3: 10派5元 on P_prev 10.50 → ref 10.00, f 1.05. D5: 10送10 on 10.40 → ref 5.20, f 2.
    const dividend = realiseAction('CN', 10.5, { date: 'D3', cashYield: 0.5 / 10.5, shareRatio: 0 });
    expect(dividend.cash).toBe(0.5);
    expect(dividend.ref).toBe(10);
    expect(dividend.factor).toBeCloseTo(1.05, 12);
    const bonus = realiseAction('CN', 10.4, { date: 'D5', cashYield: 0, shareRatio: 1 });
    expect(bonus).toEqual({ cash: 0, ref: 5.2, factor: 2 });
    expect(realiseAction('US', 601.53, { date: 'split', cashYield: 0, shareRatio: 6 }).factor).toBe(7);
  });

  it('plans ex-dates on trading days after the listing, merged per date', () => {
    const moutai = findSimInstrument('600519.SH')!;
    const plan = planActions(moutai, '2001-08-27', '2026-12-31');
    expect(plan.length).toBeGreaterThan(20);
    for (let i = 0; i < plan.length; i++) {
      expect(plan[i].date > '2001-08-27').toBe(true);
      if (i > 0) expect(plan[i].date > plan[i - 1].date).toBe(true);
    }
    expect(planActions(moutai, '2001-08-27', '2020-12-31')).toEqual(plan.filter((a) => a.date <= '2020-12-31'));
    const aapl = planActions(findSimInstrument('AAPL.US')!, '2000-01-04', '2026-12-31').filter((a) => a.shareRatio > 0);
    expect(aapl.map((a) => [a.date, a.shareRatio + 1])).toEqual(KNOWN_SPLITS['AAPL.US']);
  });
});

describe('sim largest remainder', () => {
  it('splits a total into integers that sum exactly and follow the weights', () => {
    expect(largestRemainder(10, [1, 1, 1])).toEqual([4, 3, 3]);
    expect(largestRemainder(7, [0, 2, 5])).toEqual([0, 2, 5]);
    expect(largestRemainder(100, [0.5, 0.25, 0.25])).toEqual([50, 25, 25]);
    const weights = Array.from({ length: 240 }, (_, i) => 1 + Math.sin(i) ** 2);
    expect(largestRemainder(123_457, weights).reduce((a, b) => a + b, 0)).toBe(123_457);
    expect(largestRemainder(0, [1, 2])).toEqual([0, 0]);
  });
});

async function outcome(p: Promise<void> | undefined): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (error) {
    return isAppError(error) ? error.reason : 'other';
  }
}

describe('sim fault injection', () => {
  it('does nothing without options', () => {
    expect(createFaultInjector().before()).toBeUndefined();
  });

  it('honours the rates roughly and repeats the sequence for a seed', async () => {
    const options = { errorRate: 0.2, timeoutRate: 0.1, malformedRate: 0.1, seed: 7, timeoutMs: 0 };
    const a = createFaultInjector({}, options);
    const b = createFaultInjector({}, options);
    const seqA: string[] = [];
    const seqB: string[] = [];
    for (let i = 0; i < 1000; i++) {
      seqA.push(await outcome(a.before()));
      seqB.push(await outcome(b.before()));
    }
    expect(seqB).toEqual(seqA);
    const count = (reason: string): number => seqA.filter((r) => r === reason).length;
    expect(count('UPSTREAM_ERROR')).toBeGreaterThan(150);
    expect(count('UPSTREAM_ERROR')).toBeLessThan(250);
    expect(count('UPSTREAM_TIMEOUT')).toBeGreaterThan(60);
    expect(count('UPSTREAM_TIMEOUT')).toBeLessThan(140);
    expect(count('UPSTREAM_BAD_RESPONSE')).toBeGreaterThan(60);
    expect(count('UPSTREAM_BAD_RESPONSE')).toBeLessThan(140);
    expect(count('ok')).toBe(1000 - count('UPSTREAM_ERROR') - count('UPSTREAM_TIMEOUT') - count('UPSTREAM_BAD_RESPONSE'));
    const other = createFaultInjector({}, { ...options, seed: 8 });
    const seqC: string[] = [];
    for (let i = 0; i < 1000; i++) seqC.push(await outcome(other.before()));
    expect(seqC).not.toEqual(seqA);
  });

  it('keeps the failure sequence when latency is switched on', async () => {
    const faults = { errorRate: 0.5, seed: 3 };
    const plain = createFaultInjector({}, faults);
    const slow = createFaultInjector({ fixedMs: 0, randomMs: 1 }, faults);
    for (let i = 0; i < 20; i++) expect(await outcome(slow.before())).toBe(await outcome(plain.before()));
  });

  it('gives up waiting when the deadline signal fires', async () => {
    const controller = new AbortController();
    const latency = createFaultInjector({ fixedMs: 60_000 });
    const waiting = outcome(latency.before(controller.signal));
    controller.abort(new Error('deadline'));
    expect(await waiting).toBe('UPSTREAM_TIMEOUT');
    const hanging = createFaultInjector({}, { timeoutRate: 1, timeoutMs: 60_000 });
    const controller2 = new AbortController();
    const hung = outcome(hanging.before(controller2.signal));
    controller2.abort();
    expect(await hung).toBe('UPSTREAM_TIMEOUT');
    expect(await outcome(createFaultInjector().before(AbortSignal.abort()))).toBe('UPSTREAM_TIMEOUT');
  });

  it('surfaces injected failures from the adapter as AppErrors', async () => {
    const failing = simAt(WED_MORNING, { faults: { errorRate: 1 } });
    const error = await failing.getQuotes([ref('600519.SH')]).catch((e: unknown) => e as AppError);
    expect(isAppError(error)).toBe(true);
    expect((error as AppError).reason).toBe('UPSTREAM_ERROR');
    expect((error as AppError).status).toBe(502);
    const malformed = simAt(WED_MORNING, { faults: { malformedRate: 1 } });
    await expect(malformed.getCandles({ symbol: ref('600519.SH'), period: '1d' })).rejects.toMatchObject({ reason: 'UPSTREAM_BAD_RESPONSE' });
    const timeout = simAt(WED_MORNING, { faults: { timeoutRate: 1, timeoutMs: 1 } });
    await expect(timeout.getIntraday(ref('600519.SH'))).rejects.toMatchObject({ reason: 'UPSTREAM_TIMEOUT', status: 504 });
  });
});

describe('sim largest remainder (threshold selection)', () => {
  /** The plain definition: sort every index by remainder, largest first, ties to the lower index. */
  function bySorting(total: number, weights: number[]): number[] {
    const sum = weights.reduce((a, b) => a + b, 0);
    if (sum <= 0 || total <= 0) return weights.map(() => 0);
    const quotas = weights.map((w) => (total * w) / sum);
    const out = quotas.map(Math.floor);
    let left = total - out.reduce((a, b) => a + b, 0);
    const order = quotas.map((_, i) => i).sort((a, b) => quotas[b] - out[b] - (quotas[a] - out[a]) || a - b);
    for (let j = 0; left > 0 && j < order.length; j++, left--) out[order[j]] += 1;
    return out;
  }

  it('gives exactly what sorting every remainder gives, ties included', () => {
    const rng = createRng(7);
    for (let t = 0; t < 2000; t++) {
      const n = 1 + Math.floor(rng.next() * 400);
      const kind = t % 4;
      // Random weights, all equal, small integers (many ties), a repeating pattern.
      const weights = Array.from({ length: n }, (_, k) => (kind === 0 ? rng.next() : kind === 1 ? 1 : kind === 2 ? Math.floor(rng.next() * 4) : (k % 3) + 0.5));
      const total = Math.floor(rng.next() * (t % 2 === 0 ? 1e7 : 1000));
      expect(largestRemainder(total, weights)).toEqual(bySorting(total, weights));
    }
  });
});
