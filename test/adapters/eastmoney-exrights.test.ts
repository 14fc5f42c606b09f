// Eastmoney's corporate-action tables → ex-factor records with their parts (docs/contract.md#ex-factors-and-adjustment):
// rights issues (RPT_IPO_ALLOTMENT), HK plan texts (RPT_HKF10_MAIN_DIVBASIC) and the derivation
// of ex_factor = P_prev / ref from the exchange's reference price formula.

import { describe, expect, it } from 'vitest';
import {
  deriveExFactors, parseDividendRows, parseHkDividendRows, parseHkPlan, parseRightsRows, planPerTen,
} from '../../adapters/eastmoney/exfactors.ts';
import { payloadReader, rowCheck } from '../../adapters/common/validate.ts';
import type { InvalidRowsEvent } from '../../adapters/types.ts';
import { adjustCandles } from '../../src/candles/adjust.ts';
import { fixture } from '../../mocks/handlers/support.ts';
import { cnTime } from './helpers.ts';

const r = payloadReader('eastmoney');
const rows = (name: string) => fixture<{ result: { data: unknown[] } }>('eastmoney', name).result.data;
const hkTime = (date: string) => cnTime(date); // HK and CN share UTC+8 midnights
const bar = (t: number, close: number) => ({ t, open: close, high: close, low: close, close, volume: 1, amount: 1 });

function checker(): { events: InvalidRowsEvent[]; check: ReturnType<typeof rowCheck> } {
  const events: InvalidRowsEvent[] = [];
  return { events, check: rowCheck('eastmoney', (e) => events.push(e), 'exFactors', 'X') };
}

describe('rights issues (RPT_IPO_ALLOTMENT, real row: 601398 10配0.45 at 2.99)', () => {
  it('PLACING_RATIO is per 10 shares; ISSUE_PRICE the subscription price; EX_DIVIDEND_DATE the ex-date', () => {
    const { check } = checker();
    expect(parseRightsRows(rows('rights-601398'), '601398.SH', r, check)).toEqual([
      { exDate: '2010-11-24', cash: 0, shares: 0, rights: 0.045, rightsPrice: 2.99 },
    ]);
  });

  it('ex_factor = P_prev / ((P_prev + 2.99·0.045) / 1.045), by hand with P_prev 4.25', () => {
    const { check } = checker();
    const actions = parseRightsRows(rows('rights-601398'), '601398.SH', r, check);
    const [f] = deriveExFactors('CN', actions, [bar(cnTime('2010-11-23'), 4.25)], cnTime('2011-01-01'));
    // ref = (4.25 + 0.13455) / 1.045 = 4.195741626…; f = 4.25 / ref = 1.012931…
    expect(f.ex_factor).toBeCloseTo(4.25 / (4.38455 / 1.045), 12);
    expect(f).toMatchObject({ timestamp: cnTime('2010-11-24'), cash_dividend: 0, bonus_ratio: 0, rights_ratio: 0.045, rights_price: 2.99, parts_known: true });
    // The ex-rights map sends P_prev to ref exactly (the terminals' 前复权 of the day before).
    const raw = { timestamp: [cnTime('2010-11-23'), cnTime('2010-11-24')], open: [4.25, 4.2], high: [4.25, 4.2], low: [4.25, 4.2], close: [4.25, 4.2], volume: [1, 1], amount: [1, 1] };
    expect(adjustCandles(raw, [{ ...f, prevClose: 4.25 }], 'forward_exrights').close[0]).toBeCloseTo(4.38455 / 1.045, 6);
  });

  it('a row without a usable ratio or price makes the table unusable (a partial list would mis-adjust history)', () => {
    const { check } = checker();
    const bad = [{ ...(rows('rights-601398')[0] as object), PLACING_RATIO: null }];
    expect(() => parseRightsRows(bad, '601398.SH', r, check)).toThrow();
  });

  it('a dividend and a rights issue on one date are one event: ref = (P − D + R·r) / (1 + s + r)', () => {
    const [f] = deriveExFactors('CN', [
      { exDate: '2010-07-01', cash: 0.1, shares: 0.2 },
      { exDate: '2010-07-01', cash: 0, shares: 0, rights: 0.3, rightsPrice: 8.85 },
    ], [bar(cnTime('2010-06-30'), 10)], cnTime('2011-01-01'));
    // (10 − 0.1 + 2.655) / 1.5 = 8.37; f = 10 / 8.37.
    expect(f.ex_factor).toBeCloseTo(10 / 8.37, 12);
    expect(f).toMatchObject({ cash_dividend: 0.1, bonus_ratio: 0.2, rights_ratio: 0.3, rights_price: 8.85 });
  });
});

describe('A-share plan texts (IMPL_PLAN_PROFILE), read when every ratio column is null', () => {
  it('送, 转 and 派 per 10 shares in the forms the dividend table writes; anything else is no plan', () => {
    expect(planPerTen('10送1.00派43.74元(含税)')).toEqual({ shares: 1, cash: 43.74 });
    expect(planPerTen('10送3.5转5派3元')).toEqual({ shares: 8.5, cash: 3 });
    expect(planPerTen('10转3派1.50元')).toEqual({ shares: 3, cash: 1.5 });
    expect(planPerTen('10派192.93元(含税,扣税后173.637元)')).toEqual({ shares: 0, cash: 192.93 });
    expect(planPerTen('10股派2.18元')).toEqual({ shares: 0, cash: 2.18 });
    expect(planPerTen('不分配不转增')).toBeUndefined();
    expect(planPerTen(null)).toBeUndefined();
  });

  it('a row with null ratio columns keeps the text\'s bonus shares; filled columns win over the text', () => {
    const r = payloadReader('eastmoney');
    const rows = [
      { SECUCODE: '600519.SH', EX_DIVIDEND_DATE: '2015-07-17 00:00:00', IMPL_PLAN_PROFILE: '10送1.00派43.74元(含税)', BONUS_IT_RATIO: null, BONUS_RATIO: null, IT_RATIO: null, PRETAX_BONUS_RMB: 43.74 },
      { SECUCODE: '600519.SH', EX_DIVIDEND_DATE: '2016-07-01 00:00:00', IMPL_PLAN_PROFILE: '10转3派1.50元', BONUS_IT_RATIO: null, BONUS_RATIO: null, IT_RATIO: 3, PRETAX_BONUS_RMB: 1.5 },
    ];
    const actions = parseDividendRows(rows, '600519.SH', r, rowCheck('eastmoney', undefined, 'exFactors', '600519.SH'));
    expect(actions).toEqual([
      { exDate: '2015-07-17', cash: expect.closeTo(4.374, 12), shares: expect.closeTo(0.1, 12) },
      { exDate: '2016-07-01', cash: expect.closeTo(0.15, 12), shares: expect.closeTo(0.3, 12) },
    ]);
  });
});

describe('HK plan texts (PLAN_EXPLAIN) as Eastmoney writes them', () => {
  const cases: Array<[string, ReturnType<typeof parseHkPlan>]> = [
    ['每股派港币5.3元', { cash: 5.3, shares: 0 }],
    ['每股派港币0.66元', { cash: 0.66, shares: 0 }],
    ['每股派息港币2.4元', { cash: 2.4, shares: 0 }],
    ['每股派人民币2.51元(相当于港币2.9003元)', { cash: 2.9003, shares: 0 }],
    ['每股派息2.51元(相当于港币2.9003元)', { cash: 2.9003, shares: 0 }],
    ['每股派港币1.582元(相当于人民币1.322元)', { cash: 1.582, shares: 0 }],
    ['特殊说明:每10股分派1股美团B类普通股股份(相当于每股派18.13港元)', { cash: 18.13, shares: 0 }],
    ['每1股拆细为5股', { cash: 0, shares: 4 }],
    ['1拆4', { cash: 0, shares: 3 }],
    ['每10股合并为1股', { cash: 0, shares: -0.9 }],
    ['每股派美元0.08元', 'unparsed'],
    ['每21股腾讯股份分派1股京东集团A类普通股股份', 'unparsed'],
    ['不派息', 'none'],
  ];
  for (const [text, expected] of cases) {
    it(`${text} → ${JSON.stringify(expected)}`, () => {
      const got = parseHkPlan(text);
      if (typeof expected === 'string' || typeof got === 'string') expect(got).toBe(expected);
      else {
        expect(got.cash).toBeCloseTo(expected.cash, 12);
        expect(got.shares).toBeCloseTo(expected.shares, 12);
      }
    });
  }

  it('the F10 rows (real field layout, 00883 每股派港币0.66元 ex 2025/06/12) → one cash action', () => {
    const { check } = checker();
    expect(parseHkDividendRows(rows('hk-divbasic-00883'), '00883', r, check)).toEqual([{ exDate: '2025-06-12', cash: 0.66, shares: 0 }]);
  });

  it('an unreadable plan is dropped and reported, never guessed', () => {
    const { events, check } = checker();
    const row = { ...(rows('hk-divbasic-00883')[0] as object), PLAN_EXPLAIN: '每股派美元0.08元' };
    expect(parseHkDividendRows([row], '00883', r, check)).toEqual([]);
    expect(events.map((e) => e.reason)).toEqual(['unparsed_dividend_plan']);
  });

  it('a consolidation then a dividend, by hand: qfq = 5·raw − 0.3 before both (the shape of 00593.HK\'s print, 5·raw − 1.487)', () => {
    // 每5股合并为1股 on D2 (P_prev 0.32 → ref 1.60), then 每股派港币0.3元 on D3 (P_prev 1.62 → ref 1.32).
    const actions = [{ exDate: '2023-11-14', cash: 0, shares: 1 / 5 - 1 }, { exDate: '2023-11-16', cash: 0.3, shares: 0 }];
    const closes = [bar(hkTime('2023-11-13'), 0.32), bar(hkTime('2023-11-14'), 1.58), bar(hkTime('2023-11-15'), 1.62), bar(hkTime('2023-11-16'), 1.35)];
    const events = deriveExFactors('HK', actions, closes, hkTime('2023-12-01'));
    expect(events[0].ex_factor).toBeCloseTo(0.2, 12);
    expect(events[1].ex_factor).toBeCloseTo(1.62 / 1.32, 12);
    const raw = {
      timestamp: closes.map((b) => b.t), open: closes.map((b) => b.close), high: closes.map((b) => b.close), low: closes.map((b) => b.close),
      close: closes.map((b) => b.close), volume: [1, 1, 1, 1], amount: [1, 1, 1, 1],
    };
    const qfq = adjustCandles(raw, events.map((e) => ({ ...e, prevClose: Number.NaN })), 'forward_exrights').close;
    expect(qfq).toEqual([5 * 0.32 - 0.3, 1.28, 1.32, 1.35].map((x) => Math.round(x * 1e6) / 1e6));
  });
});
