// Corporate actions of the simulated market: cash dividends, bonus/transfer shares (送转) and
// splits. Planning is a pure function of (instrument, year): it never looks at prices, so the
// same ex-dates come out whatever window or clock is asked for. Amounts are realised later by the
// daily walk, which knows P_prev (the raw close before the ex-date): the dividend is a planned
// fraction of P_prev, rounded as an exchange would publish it.

import type { ExFactorParts, Region } from '../../src/domain.ts';
import { isTradingDay, nextTradingDay } from '../../src/markets/calendar.ts';
import type { SimInstrument } from './instruments.ts';
import { rngFor, type Rng } from './random.ts';

export interface PlannedAction {
  /** Ex-date, a trading day of the instrument's market. */
  date: string;
  /** Cash dividend as a fraction of P_prev; 0 when the event pays no cash. */
  cashYield: number;
  /** New shares per old share (bonus + transfer, or split ratio − 1); 0 when none. */
  shareRatio: number;
}

export interface RealisedAction {
  /** Cash per share in the trading currency, as published. */
  cash: number;
  /** The ex-rights reference price (P_prev − D) / (1 + s), unrounded. */
  ref: number;
  /** P_prev / ref (computed so that a split's factor is exactly its ratio). */
  factor: number;
}

/**
 * Real split history since 2000 (ex-date, new shares per old share) for names whose dates are
 * well known. Instruments flagged with splits but absent here get seeded synthetic splits.
 */
export const KNOWN_SPLITS: Readonly<Record<string, readonly (readonly [string, number])[]>> = {
  'AAPL.US': [['2000-06-21', 2], ['2005-02-28', 2], ['2014-06-09', 7], ['2020-08-31', 4]],
  'MSFT.US': [['2003-02-18', 2]],
  'NVDA.US': [['2006-04-07', 2], ['2007-09-11', 1.5], ['2021-07-20', 4], ['2024-06-10', 10]],
  'TSLA.US': [['2020-08-31', 5], ['2022-08-25', 3]],
  'GOOGL.US': [['2022-07-18', 20]],
  'GOOG.US': [['2022-07-18', 20]],
  'AMZN.US': [['2022-06-06', 20]],
  'BRK.B.US': [['2010-01-21', 50]],
  'WMT.US': [['2024-02-26', 3]],
  'AVGO.US': [['2024-07-15', 10]],
  'NFLX.US': [['2004-02-12', 2], ['2015-07-15', 7], ['2025-11-17', 10]],
  'V.US': [['2015-03-19', 4]],
  'MA.US': [['2014-01-22', 10]],
  'KO.US': [['2012-08-13', 2]],
  'NKE.US': [['2007-04-03', 2], ['2012-12-26', 2], ['2015-12-23', 2]],
  '00700.HK': [['2014-05-15', 5]],
};

/** [month, first day, last day] windows in which each dividend of a year goes ex. */
type Window = readonly [month: number, from: number, to: number];

const DIVIDEND_WINDOWS: Record<Region, Record<'annual' | 'semiannual' | 'quarterly', readonly Window[]>> = {
  // A-shares: the annual (final) dividend goes ex in June–July; interim ones in December.
  CN: {
    annual: [[6, 1, 30], [7, 1, 31]],
    semiannual: [[6, 10, 30], [12, 5, 25]],
    quarterly: [[3, 10, 28], [6, 10, 28], [9, 10, 28], [12, 5, 25]],
  },
  HK: {
    annual: [[5, 10, 31], [6, 1, 20]],
    semiannual: [[5, 15, 31], [9, 1, 20]],
    quarterly: [[3, 10, 28], [6, 1, 20], [9, 1, 20], [12, 1, 15]],
  },
  US: {
    annual: [[6, 1, 20]],
    semiannual: [[6, 1, 20], [12, 1, 15]],
    quarterly: [[2, 5, 20], [5, 5, 20], [8, 5, 20], [11, 5, 20]],
  },
};

/** Days after listing before the first dividend, bonus issue or synthetic split. */
const SEASONING_DAYS = 180;
const BONUS_CHANCE_PER_YEAR = 0.15;
const BONUS_PER_TEN: readonly number[] = [2, 3, 3, 4, 4, 5, 10];
const SYNTHETIC_SPLIT_CHANCE_PER_YEAR = 0.04;

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** The first trading day on or after `date`. */
export function onOrAfterTradingDay(region: Region, date: string): string {
  return isTradingDay(region, date) ? date : nextTradingDay(region, date);
}

function dateIn(region: Region, year: number, window: Window, rng: Rng): string {
  const [month, from, to] = window;
  return onOrAfterTradingDay(region, `${year}-${pad(month)}-${pad(rng.int(from, to))}`);
}

function daysBetween(from: string, to: string): number {
  return (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000;
}

function plannedYear(inst: SimInstrument, year: number): PlannedAction[] {
  // One generator per (instrument, year), with a fixed draw order, so a year's plan never
  // depends on which other years are planned.
  const rng = rngFor(inst.symbol, year, 'actions');
  const out: PlannedAction[] = [];
  if (inst.dividend !== 'none' && inst.dividendYield > 0) {
    const windows = DIVIDEND_WINDOWS[inst.region][inst.dividend];
    const chosen = inst.dividend === 'annual' ? [windows[rng.int(0, windows.length - 1)]] : windows;
    for (const window of chosen) {
      const date = dateIn(inst.region, year, window, rng);
      const cashYield = (inst.dividendYield / chosen.length) * Math.exp(0.2 * rng.normal());
      out.push({ date, cashYield, shareRatio: 0 });
    }
  }
  const bonusRoll = rng.next();
  const bonusTen = BONUS_PER_TEN[rng.int(0, BONUS_PER_TEN.length - 1)];
  const bonusWindow: Window = [rng.int(5, 7), 1, 28];
  const bonusDate = dateIn(inst.region, year, bonusWindow, rng);
  if (inst.bonusShares && bonusRoll < BONUS_CHANCE_PER_YEAR) {
    // A-share 送转 usually goes ex together with the final dividend.
    const final = out[0];
    if (final !== undefined) final.shareRatio += bonusTen / 10;
    else out.push({ date: bonusDate, cashYield: 0, shareRatio: bonusTen / 10 });
  }
  const splitRoll = rng.next();
  const splitRatio = [2, 2, 2, 2, 2, 2, 2, 3, 3, 4][rng.int(0, 9)];
  const splitDate = dateIn(inst.region, year, [rng.int(1, 12), 1, 28], rng);
  if (inst.splits && KNOWN_SPLITS[inst.symbol] === undefined && splitRoll < SYNTHETIC_SPLIT_CHANCE_PER_YEAR) {
    out.push({ date: splitDate, cashYield: 0, shareRatio: splitRatio - 1 });
  }
  return out;
}

/**
 * Every action with an ex-date in (firstDay, lastDate], ascending, one record per ex-date
 * (events on the same date are merged: ref = (P − D) / (1 + s) takes both at once).
 */
export function planActions(inst: SimInstrument, firstDay: string, lastDate: string): PlannedAction[] {
  const byDate = new Map<string, PlannedAction>();
  const add = (action: PlannedAction): void => {
    if (action.date <= firstDay || action.date > lastDate) return;
    const existing = byDate.get(action.date);
    if (existing === undefined) byDate.set(action.date, { ...action });
    else {
      existing.cashYield += action.cashYield;
      existing.shareRatio = (1 + existing.shareRatio) * (1 + action.shareRatio) - 1;
    }
  };
  const firstYear = Number(firstDay.slice(0, 4));
  const lastYear = Number(lastDate.slice(0, 4));
  for (let year = firstYear; year <= lastYear; year++) {
    for (const action of plannedYear(inst, year)) {
      if (daysBetween(inst.listingDate, action.date) >= SEASONING_DAYS) add(action);
    }
  }
  for (const [date, ratio] of KNOWN_SPLITS[inst.symbol] ?? []) {
    add({ date: onOrAfterTradingDay(inst.region, date), cashYield: 0, shareRatio: ratio - 1 });
  }
  return [...byDate.values()].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
}

/** Cash per share as published: A-share and HK dividends to 0.001, US to the cent. */
export function roundCash(region: Region, cash: number): number {
  if (region === 'US') return Math.round(cash * 100) / 100;
  return Math.round(cash * 1000) / 1000;
}

/** The event's cash, reference price and factor, given the raw close before the ex-date. */
export function realiseAction(region: Region, pPrev: number, action: PlannedAction): RealisedAction {
  let cash = action.cashYield > 0 ? roundCash(region, action.cashYield * pPrev) : 0;
  // A payer never pays less than the smallest published unit.
  if (action.cashYield > 0 && cash <= 0) cash = region === 'US' ? 0.01 : 0.001;
  const ref = (pPrev - cash) / (1 + action.shareRatio);
  // Equal to pPrev / ref; without cash it is the share ratio itself, so a pure split gives its
  // ratio exactly (20, not 19.999999999999996 = p·20 / p for some p).
  const factor = cash === 0 ? 1 + action.shareRatio : (pPrev * (1 + action.shareRatio)) / (pPrev - cash);
  return { cash, ref, factor };
}

/**
 * The parts an ex-factor record carries for a realised event (docs/contract.md#ex-factors-and-adjustment), per share: the cash
 * as published and the new shares per old share (bonus + transfer, or a split's ratio − 1). The
 * sim has no rights issues. ref = (P_prev − cash) / (1 + bonus) is the reference price the walk
 * gapped to, so the ex-rights adjustment of the sim's bars is exact.
 */
export function actionParts(cash: number, shareRatio: number): Required<ExFactorParts> {
  return { cash_dividend: cash, bonus_ratio: shareRatio, rights_ratio: 0, rights_price: 0, parts_known: true };
}
