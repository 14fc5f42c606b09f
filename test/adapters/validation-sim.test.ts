// The sim's answers cross the same boundary checks as a vendor's (issue 14.4). Its fault
// injection can now send one malformed row per call (`faults.invalidRowRate`), as a misbehaving
// vendor would; the checks drop exactly that row and report it, and the rest equals a clean sim.
import { describe, expect, it } from 'vitest';
import { createSimAdapter, type SimOptions } from '../../adapters/sim/index.ts';
import { CORRUPTIONS, createFaultInjector } from '../../adapters/sim/faults.ts';
import { corruptCandles } from '../../adapters/sim/boundary.ts';
import type { Adapter, InvalidRowsEvent } from '../../adapters/types.ts';
import type { Candles } from '../../src/domain.ts';
import { AFTER_CLOSE, expectWellFormed, ref } from './sim-fixtures.ts';

const MT = ref('600519.SH');
const TENCENT = ref('00700.HK');
const AAPL = ref('AAPL.US');
const REASON = { negative_price: 'non_positive_price', non_finite: 'non_finite', negative_volume: 'negative_volume', duplicate: 'duplicate_timestamp' };

function sim(options: SimOptions = {}, events: InvalidRowsEvent[] = []): ReturnType<typeof createSimAdapter> {
  return createSimAdapter(options, { now: () => AFTER_CLOSE, onInvalidRows: (e) => events.push(e) });
}

/** `c` without row `i`. */
function without(c: Candles, i: number): Candles {
  const drop = <T>(col: T[]) => col.filter((_, k) => k !== i);
  const out: Candles = {
    timestamp: drop(c.timestamp), open: drop(c.open), high: drop(c.high), low: drop(c.low), close: drop(c.close),
    volume: drop(c.volume), amount: drop(c.amount),
  };
  if (c.prev_close) out.prev_close = drop(c.prev_close);
  return out;
}

describe('sim: injected malformed rows never reach the caller', () => {
  it('draws every kind of malformed row, deterministically per seed, and none without the option', () => {
    const a = createFaultInjector({}, { invalidRowRate: 1, seed: 5 });
    const b = createFaultInjector({}, { invalidRowRate: 1, seed: 5 });
    const kinds = Array.from({ length: 40 }, () => a.corruption());
    expect(Array.from({ length: 40 }, () => b.corruption())).toEqual(kinds);
    expect(new Set(kinds)).toEqual(new Set(CORRUPTIONS));
    expect(createFaultInjector({}, { errorRate: 0.5 }).corruption()).toBeUndefined();
  });

  it('each kind spoils the middle candle, and the checks drop exactly that one', async () => {
    const clean = (await sim().getCandles({ symbol: MT, period: '1d', count: 9 })) as Candles;
    for (const kind of CORRUPTIONS) {
      const spoiled = corruptCandles(clean, kind);
      expect(spoiled, kind).not.toEqual(clean);
    }
    const events: InvalidRowsEvent[] = [];
    const faulty = sim({ faults: { invalidRowRate: 1, seed: 5 } }, events);
    const reference = createFaultInjector({}, { invalidRowRate: 1, seed: 5 });
    for (let call = 0; call < 8; call++) {
      const kind = reference.corruption()!;
      events.length = 0;
      const got = (await faulty.getCandles({ symbol: MT, period: '1d', count: 9 })) as Candles;
      expect(got, `call ${call} (${kind})`).toEqual(without(clean, 4));
      expectWellFormed(got);
      expect(events).toEqual([{ adapter: 'sim', resource: 'candles', symbol: '600519.SH', dropped: 1, reason: REASON[kind] }]);
    }
  });

  it('quotes: a spoiled quote is left out (or its older duplicate dropped); the others equal a clean sim', async () => {
    const clean = await sim().getQuotes([MT, TENCENT, AAPL]);
    const events: InvalidRowsEvent[] = [];
    const faulty = sim({ faults: { invalidRowRate: 1, seed: 9 } }, events);
    const reference = createFaultInjector({}, { invalidRowRate: 1, seed: 9 });
    for (let call = 0; call < 8; call++) {
      const kind = reference.corruption()!;
      events.length = 0;
      const got = await faulty.getQuotes([MT, TENCENT, AAPL]);
      if (kind === 'duplicate') {
        expect(got).toEqual(clean);
        expect(events).toEqual([{ adapter: 'sim', resource: 'quotes', dropped: 1, reason: 'duplicate_symbol' }]);
      } else {
        expect([...got.keys()]).toEqual(['00700.HK', 'AAPL.US']);
        expect(got.get('AAPL.US')).toEqual(clean.get('AAPL.US'));
        expect(events).toEqual([{ adapter: 'sim', resource: 'quotes', dropped: 1, reason: REASON[kind] }]);
      }
    }
  });

  it('a single-symbol quote batch left with nothing usable is UPSTREAM_BAD_RESPONSE', async () => {
    const reference = createFaultInjector({}, { invalidRowRate: 1, seed: 2 });
    const faulty = sim({ faults: { invalidRowRate: 1, seed: 2 } });
    for (let call = 0; call < 8; call++) {
      const kind = reference.corruption()!;
      const answer = faulty.getQuotes([MT]);
      if (kind === 'duplicate') expect((await answer).size).toBe(1);
      else await expect(answer).rejects.toMatchObject({ reason: 'UPSTREAM_BAD_RESPONSE', status: 502 });
    }
  });

  it('ex-factors: a repeated event is applied once; an invalid factor leaves the symbol out', async () => {
    const clean = await sim().getExFactors([MT, AAPL]);
    const events: InvalidRowsEvent[] = [];
    const faulty = sim({ faults: { invalidRowRate: 1, seed: 4 } }, events);
    const reference = createFaultInjector({}, { invalidRowRate: 1, seed: 4 });
    for (let call = 0; call < 8; call++) {
      const kind = reference.corruption()!;
      events.length = 0;
      const got = await faulty.getExFactors([MT, AAPL]);
      expect(got.get('AAPL.US')).toEqual(clean.get('AAPL.US'));
      if (kind === 'duplicate') {
        expect(got.get('600519.SH')).toEqual(clean.get('600519.SH'));
        expect(events).toEqual([{ adapter: 'sim', resource: 'exFactors', symbol: '600519.SH', dropped: 1, reason: 'duplicate_ex_factor' }]);
      } else {
        expect(got.has('600519.SH')).toBe(false);
        expect(events).toHaveLength(1);
        expect(events[0]).toMatchObject({ symbol: '600519.SH', reason: 'invalid_ex_factor', dropped: clean.get('600519.SH')!.length });
      }
    }
  });

  it('depth and instruments: the spoiled level or instrument is dropped and reported', async () => {
    const cleanDepth = await sim().getDepth([MT, AAPL]);
    const events: InvalidRowsEvent[] = [];
    const faulty = sim({ faults: { invalidRowRate: 1, seed: 6 } }, events);
    const d = await faulty.getDepth([MT, AAPL]);
    expect(d.get('AAPL.US')).toEqual(cleanDepth.get('AAPL.US'));
    expect(d.get('600519.SH')?.bid_prices).toEqual(cleanDepth.get('600519.SH')?.bid_prices.slice(1));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ adapter: 'sim', resource: 'depth', symbol: '600519.SH', dropped: 1 });

    events.length = 0;
    const found = await faulty.getInstruments([MT, AAPL]);
    expect([...found.keys()]).toEqual(['AAPL.US']);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ adapter: 'sim', resource: 'instruments', symbol: '600519.SH', dropped: 1 });
  });

  it('without invalid rows the answers are untouched and nothing is reported', async () => {
    const events: InvalidRowsEvent[] = [];
    const a = sim({}, events);
    await a.getQuotes([MT, TENCENT, AAPL]);
    await a.getCandles({ symbol: MT, period: '1m', count: 300 });
    await a.getIntraday(TENCENT);
    await a.getExFactors([MT, AAPL]);
    expect(events).toEqual([]);
  });
});
