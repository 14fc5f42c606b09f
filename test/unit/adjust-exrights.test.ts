// The ex-rights extensions (docs/contract.md#ex-factors-and-adjustment): forward_exrights / backward_exrights apply each event's
// reference-price map P → (P − cash + R·r) / (1 + s + r), composed over events. Worked examples
// per kind of event computed by hand from the exchange's formula, properties against the ratio
// and difference methods, and a real Eastmoney qfq print reproduced from the real event list.

import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AdjustType, Candles } from '../../src/domain.ts';
import { adjustCandles, cumulativeMaps, eventInverse, eventMap, normaliseEvents, type AdjustEvent } from '../../src/candles/adjust.ts';
import { buildCandles } from '../../src/candles/pipeline.ts';

const HOUR = 3_600_000;
const cnDay = (date: string): number => Date.parse(`${date}T00:00:00Z`) - 8 * HOUR;

function candles(dates: string[], close: number[]): Candles {
  return {
    timestamp: dates.map(cnDay),
    open: close.slice(),
    high: close.slice(),
    low: close.slice(),
    close,
    volume: close.map(() => 100),
    amount: close.map((c) => c * 100),
  };
}

const ref = (p: number, cash: number, bonus: number, rights: number, price: number) => (p - cash + price * rights) / (1 + bonus + rights);

function event(date: string, pPrev: number, parts: { cash?: number; bonus?: number; rights?: number; price?: number }): AdjustEvent {
  const cash = parts.cash ?? 0;
  const bonus = parts.bonus ?? 0;
  const rights = parts.rights ?? 0;
  const price = parts.price ?? 0;
  return {
    timestamp: cnDay(date), prevClose: pPrev, ex_factor: pPrev / ref(pPrev, cash, bonus, rights, price),
    cash_dividend: cash, bonus_ratio: bonus, rights_ratio: rights, rights_price: price, parts_known: true,
  };
}

describe('worked examples, one per kind of event (by hand from the exchange formula)', () => {
  const dates = ['2025-01-06', '2025-01-07', '2025-01-08'];

  it('cash dividend 10派5元 (0.50/share): forward subtracts 0.50 before the ex-date, backward adds it after', () => {
    // P_prev 10.50 → ref 10.00; qfq(D1) = 10.00 − 0.50 = 9.50; hfq(D3) = 10.20 + 0.50 = 10.70.
    const raw = candles(dates, [10.0, 10.5, 10.2]);
    const ev = [event(dates[2], 10.5, { cash: 0.5 })];
    expect(adjustCandles(raw, ev, 'forward_exrights').close).toEqual([9.5, 10.0, 10.2]);
    expect(adjustCandles(raw, ev, 'backward_exrights').close).toEqual([10.0, 10.5, 10.7]);
  });

  it('bonus 10送10 (1 share/share): divides by 2 like the ratio method', () => {
    // ref = 10.40 / 2 = 5.20; qfq(D2) = 10.40 / 2 = 5.20; hfq(D3) = 5.30 · 2 = 10.60.
    const raw = candles(dates, [10.0, 10.4, 5.3]);
    const ev = [event(dates[2], 10.4, { bonus: 1 })];
    expect(adjustCandles(raw, ev, 'forward_exrights').close).toEqual([5.0, 5.2, 5.3]);
    expect(adjustCandles(raw, ev, 'backward_exrights').close).toEqual([10.0, 10.4, 10.6]);
  });

  it('rights issue 10配3 at 8.00 (0.3 share/share): P → (P + 2.40) / 1.3', () => {
    // P_prev 12.00 → ref = (12 + 0.3·8) / 1.3 = 14.40 / 1.3 = 11.076923; qfq(D1 11.70) = 14.10 / 1.3 = 10.846154.
    const raw = candles(dates, [11.7, 12.0, 11.2]);
    const ev = [event(dates[2], 12.0, { rights: 0.3, price: 8 })];
    expect(adjustCandles(raw, ev, 'forward_exrights').close).toEqual([10.846154, 11.076923, 11.2]);
    // hfq(D3) = 11.20 · 1.3 − 2.40 = 12.16: the inverse map.
    expect(adjustCandles(raw, ev, 'backward_exrights').close).toEqual([11.7, 12.0, 12.16]);
    // The ratio method differs on every earlier bar except at P_prev itself.
    const ratio = adjustCandles(raw, ev, 'forward').close;
    expect(ratio[1]).toBeCloseTo(11.076923, 6);
    expect(ratio[0]).not.toBeCloseTo(10.846154, 3);
  });

  it('split 1拆4 (bonus 3) and consolidation 5合1 (bonus −0.8)', () => {
    const raw = candles(dates, [400, 420, 106]);
    const split = [event(dates[2], 420, { bonus: 3 })];
    expect(adjustCandles(raw, split, 'forward_exrights').close).toEqual([100, 105, 106]);
    const rawC = candles(dates, [0.3, 0.32, 1.55]);
    const consolidation = [event(dates[2], 0.32, { bonus: -0.8 })];
    expect(adjustCandles(rawC, consolidation, 'forward_exrights').close).toEqual([1.5, 1.6, 1.55]);
    expect(adjustCandles(rawC, consolidation, 'backward_exrights').close).toEqual([0.3, 0.32, 0.31]);
  });

  it('one day with 10送2配3派1 (cash 0.1, bonus 0.2, rights 0.3 at 8.85): one map, not three', () => {
    // ref = (10.00 − 0.10 + 8.85·0.3) / 1.5 = 12.555 / 1.5 = 8.37.
    const raw = candles(dates, [9.8, 10.0, 8.4]);
    const ev = [event(dates[2], 10.0, { cash: 0.1, bonus: 0.2, rights: 0.3, price: 8.85 })];
    expect(ev[0].ex_factor).toBeCloseTo(10 / 8.37, 12);
    expect(adjustCandles(raw, ev, 'forward_exrights').close).toEqual([8.236667, 8.37, 8.4]);
  });

  it('the worked example of docs/vendors.md (10派5元 on D3, 10送10 on D5): a composition of the two maps', () => {
    const d = ['2025-01-06', '2025-01-07', '2025-01-08', '2025-01-09', '2025-01-10'];
    const raw = candles(d, [10.0, 10.5, 10.2, 10.4, 5.3]);
    const ev = [event(d[2], 10.5, { cash: 0.5 }), event(d[4], 10.4, { bonus: 1 })];
    // qfq(D1) = (10.00 − 0.50) / 2 = 4.75 (ratio gives 4.761905, difference 4.30).
    expect(adjustCandles(raw, ev, 'forward_exrights').close).toEqual([4.75, 5.0, 5.1, 5.2, 5.3]);
    // hfq(D5) = 5.30 · 2 + 0.50 = 11.10; hfq(D3) = 10.20 + 0.50 = 10.70.
    expect(adjustCandles(raw, ev, 'backward_exrights').close).toEqual([10.0, 10.5, 10.7, 10.9, 11.1]);
  });

  it('an event whose parts are unknown uses its ratio (parts_known: false)', () => {
    const raw = candles(dates, [10.0, 10.5, 10.2]);
    const ev: AdjustEvent[] = [{ timestamp: cnDay(dates[2]), ex_factor: 1.05, prevClose: 10.5, parts_known: false }];
    expect(adjustCandles(raw, ev, 'forward_exrights').close).toEqual(adjustCandles(raw, ev, 'forward').close);
    expect(adjustCandles(raw, ev, 'backward_exrights').close).toEqual(adjustCandles(raw, ev, 'backward').close);
  });

  it('prev_close follows the same map as the previous bar; the pipeline keeps it equal to the previous adjusted close', () => {
    const raw = { ...candles(dates, [10.0, 10.5, 10.2]), prev_close: [9.9, 10.0, 10.5] };
    const ev = [event(dates[2], 10.5, { cash: 0.5 })];
    const out = buildCandles({ raw, events: ev, adjust: 'forward_exrights' });
    expect(out.prev_close).toEqual([9.4, 9.5, 10.0]);
  });

  it('maps and inverses compose to the identity', () => {
    const e = event(dates[2], 12, { cash: 0.3, bonus: 0.2, rights: 0.1, price: 7 });
    const f = eventMap(e);
    const g = eventInverse(e);
    expect(f.a * g.a).toBeCloseTo(1, 12);
    expect(f.a * g.b + f.b).toBeCloseTo(0, 12);
    const maps = cumulativeMaps([cnDay(dates[0])], [e], 'forward_exrights');
    expect(maps.a[0]).toBeCloseTo(1 / 1.3, 12);
  });

  it('an event with usable parts but no usable ratio still counts for the ex-rights methods only', () => {
    const e: AdjustEvent = { timestamp: cnDay(dates[2]), ex_factor: Number.NaN, prevClose: Number.NaN, cash_dividend: 0.5, parts_known: true };
    expect(normaliseEvents([e], 'forward_exrights')).toHaveLength(1);
    expect(normaliseEvents([e], 'forward')).toHaveLength(0);
  });
});

// ---- properties ---------------------------------------------------------------------------------

const DATES = Array.from({ length: 40 }, (_, i) => new Date(Date.UTC(2024, 0, 1) + i * 86_400_000).toISOString().slice(0, 10));

interface Series {
  raw: Candles;
  exAt: number[];
}

const series = fc.record({
  closes: fc.array(fc.integer({ min: 100, max: 50_000 }), { minLength: 40, maxLength: 40 }),
  exAt: fc.uniqueArray(fc.integer({ min: 1, max: 39 }), { minLength: 1, maxLength: 5 }),
}).map(({ closes, exAt }): Series => ({
  raw: { ...candles(DATES, closes.map((c) => c / 100)), prev_close: closes.map((c, i) => (i === 0 ? c : closes[i - 1]) / 100) },
  exAt: exAt.sort((a, b) => a - b),
}));

function close(a: Candles, b: Candles, tol = 2e-6): void {
  for (const k of ['open', 'high', 'low', 'close', 'prev_close'] as const) {
    const x = a[k] as number[];
    const y = b[k] as number[];
    x.forEach((v, i) => expect(Math.abs(v - y[i])).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(y[i]))));
  }
}

describe('properties', () => {
  it('cash-only events: forward_exrights = forward_additive, backward_exrights = backward_additive', () => {
    fc.assert(fc.property(series, fc.array(fc.double({ min: 0.001, max: 0.6, noNaN: true }), { minLength: 5, maxLength: 5 }), ({ raw, exAt }, yields) => {
      const events = exAt.map((k, i) => {
        const pPrev = raw.close[k - 1];
        return event(DATES[k], pPrev, { cash: Math.round(pPrev * yields[i] * 1000) / 1000 || 0.001 });
      });
      const pairs: Array<[AdjustType, AdjustType]> = [['forward_exrights', 'forward_additive'], ['backward_exrights', 'backward_additive']];
      for (const [x, y] of pairs) close(adjustCandles(raw, events, x), adjustCandles(raw, events, y));
    }), { numRuns: 200 });
  });

  it('share-only events (bonus, split, consolidation): forward_exrights = forward, backward_exrights = backward', () => {
    const bonus = fc.oneof(fc.constantFrom(0.1, 0.2, 0.5, 1, 3, 9, -0.5, -0.8, -0.9), fc.double({ min: -0.9, max: 9, noNaN: true }).filter((b) => Math.abs(b) > 1e-3));
    fc.assert(fc.property(series, fc.array(bonus, { minLength: 5, maxLength: 5 }), ({ raw, exAt }, ratios) => {
      const events = exAt.map((k, i) => event(DATES[k], raw.close[k - 1], { bonus: ratios[i] }));
      close(adjustCandles(raw, events, 'forward_exrights'), adjustCandles(raw, events, 'forward'));
      close(adjustCandles(raw, events, 'backward_exrights'), adjustCandles(raw, events, 'backward'));
    }), { numRuns: 200 });
  });

  it('forward and backward ex-rights series differ by one affine map (the latest bar as traded in forward, the first in backward)', () => {
    fc.assert(fc.property(series, fc.array(fc.record({ cash: fc.double({ min: 0, max: 0.3, noNaN: true }), bonus: fc.double({ min: 0, max: 1, noNaN: true }) }), { minLength: 5, maxLength: 5 }), ({ raw, exAt }, parts) => {
      const events = exAt.map((k, i) => event(DATES[k], raw.close[k - 1], { cash: parts[i].cash * raw.close[k - 1], bonus: parts[i].bonus }));
      const fwd = adjustCandles(raw, events, 'forward_exrights');
      const bwd = adjustCandles(raw, events, 'backward_exrights');
      const n = raw.close.length;
      expect(fwd.close[n - 1]).toBeCloseTo(raw.close[n - 1], 6);
      expect(bwd.close[0]).toBeCloseTo(raw.close[0], 6);
      // bwd = A·fwd + B with A = Π(1 + s) and B = hfq of a forward price 0.
      const total = cumulativeMaps([cnDay(DATES[n - 1])], events, 'backward_exrights');
      fwd.close.forEach((q, i) => expect(Math.abs(total.a[0] * q + total.b[0] - bwd.close[i])).toBeLessThan(1e-4 * Math.max(1, Math.abs(bwd.close[i]))));
    }), { numRuns: 100 });
  });
});

// ---- a real Eastmoney print --------------------------------------------------------------------

describe('Eastmoney qfq print reproduced from the real event list', () => {
  const fixture = JSON.parse(readFileSync(new URL('../../mocks/fixtures/eastmoney/prints/600519-qfq-2001.json', import.meta.url), 'utf8')) as {
    print: { rows: Array<{ date: string; close: number }> };
    raw: Array<{ date: string; close: number }>;
    events: Array<{ ex_date: string; cash_per_share: number; shares_per_share: number }>;
  };

  it('600519.SH 2001-08-27: raw close 35.55 → qfq −89.53 (efinance examples/stock.ipynb), within one tick', () => {
    const raw = candles([fixture.raw[0].date], [fixture.raw[0].close]);
    // Only the parts matter to the ex-rights map; ex_factor is left unknown (no P_prev here).
    const events: AdjustEvent[] = fixture.events.map((e) => ({
      timestamp: cnDay(e.ex_date), ex_factor: Number.NaN, prevClose: Number.NaN,
      cash_dividend: e.cash_per_share, bonus_ratio: e.shares_per_share, rights_ratio: 0, rights_price: 0, parts_known: true,
    }));
    const printed = fixture.print.rows[0].close;
    const ours = adjustCandles(raw, events, 'forward_exrights').close[0];
    expect(Math.abs(ours - printed)).toBeLessThanOrEqual(0.01);
    expect(ours).toBeCloseTo(-89.528136, 5);
  });
});
