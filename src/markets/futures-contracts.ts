// A futures product's contracts over time, from its table row (./futures.ts) and CN's trading days:
// each contract's last trading day by its exchange's rule, when it lists, which contracts trade on a
// date and which of them is the main contract (the code a product's main contract goes by changes
// as the months roll).

import { addDays, isTradingDay, nextTradingDay, prevTradingDay } from './calendar.ts';
import { contractCode, type FuturesProduct } from './futures.ts';

export interface Contract {
  code: string;
  year: number;
  month: number;
  /** YYYY-MM-DD. */
  listingDate: string;
  lastTradeDate: string;
}

const pad = (n: number) => String(n).padStart(2, '0');

function monthShift(year: number, month: number, by: number): [number, number] {
  const index = year * 12 + (month - 1) + by;
  return [Math.floor(index / 12), (index % 12) + 1];
}

function onOrAfter(date: string): string {
  return isTradingDay('CN', date) ? date : nextTradingDay('CN', date);
}

/** The n-th given weekday (0 = Sunday) of a month, as a date. */
function nthWeekday(year: number, month: number, weekday: number, n: number): string {
  const first = new Date(Date.UTC(year, month - 1, 1)).getUTCDay();
  return `${year}-${pad(month)}-${pad(1 + ((weekday - first + 7) % 7) + (n - 1) * 7)}`;
}

/** The contract's last trading day by its exchange's rule, moved to the next trading day when the rule lands on a closed day. */
export function lastTradeDate(product: FuturesProduct, year: number, month: number): string {
  const first = `${year}-${pad(month)}-01`;
  switch (product.lastTrade) {
    case '15th':
      return onOrAfter(`${year}-${pad(month)}-15`);
    case '10th_trading_day': {
      let day = onOrAfter(first);
      for (let i = 1; i < 10; i++) day = nextTradingDay('CN', day);
      return day;
    }
    case '3rd_friday':
      return onOrAfter(nthWeekday(year, month, 5, 3));
    case '2nd_friday':
      return onOrAfter(nthWeekday(year, month, 5, 2));
    case 'prev_month_end':
      return prevTradingDay('CN', first);
    case 'last_monday': {
      const [ny, nm] = monthShift(year, month, 1);
      let day = addDays(`${ny}-${pad(nm)}-01`, -1);
      while (new Date(`${day}T00:00:00Z`).getUTCDay() !== 1) day = addDays(day, -1);
      return onOrAfter(day);
    }
  }
}

/** Months between a contract's listing and its delivery: the contract N months earlier expires the day before it lists. */
function listingLead(product: FuturesProduct, month: number): number {
  if (product.months === 'cffex_index') return month % 3 === 0 ? 8 : 2;
  if (product.dayGroup === 'treasury') return 9;
  return 12;
}

function contractOf(product: FuturesProduct, year: number, month: number): Contract {
  const [py, pm] = monthShift(year, month, -listingLead(product, month));
  let listingDate = nextTradingDay('CN', lastTradeDate(product, py, pm));
  if (listingDate < product.since) listingDate = onOrAfter(product.since);
  return { code: contractCode(product, year, month), year, month, listingDate, lastTradeDate: lastTradeDate(product, year, month) };
}

/** The product's contract for a delivery month (listed or not). */
export function contractFor(product: FuturesProduct, year: number, month: number): Contract {
  return contractOf(product, year, month);
}

/** Contracts trading on `date` (listed, not past their last trading day), nearest delivery first. */
export function liveContracts(product: FuturesProduct, date: string): Contract[] {
  const year = Number(date.slice(0, 4));
  const month = Number(date.slice(5, 7));
  const out: Contract[] = [];
  for (let k = -1; k <= 14; k++) {
    const [y, m] = monthShift(year, month, k);
    if (product.months !== 'cffex_index' && !product.months.includes(m)) continue;
    const c = contractOf(product, y, m);
    if (c.listingDate <= date && date <= c.lastTradeDate) out.push(c);
  }
  return out;
}

/**
 * The main contract on `date`: the first live contract of a main month whose delivery month is more
 * than a month away; without main months (CFFEX) the nearest contract, rolled five days before an
 * index contract's expiry and a month before a treasury contract's delivery month.
 */
export function mainContract(product: FuturesProduct, date: string): Contract | undefined {
  const live = liveContracts(product, date);
  const soon = addDays(date, 31);
  if (product.mainMonths === null) {
    if (product.months === 'cffex_index') return live.find((c) => c.lastTradeDate > addDays(date, 5)) ?? live[0];
    return live.find((c) => `${c.year}-${pad(c.month)}-01` > soon) ?? live[live.length - 1];
  }
  const mains = product.mainMonths;
  return live.find((c) => mains.includes(c.month) && `${c.year}-${pad(c.month)}-01` > soon) ?? live[live.length - 1];
}
