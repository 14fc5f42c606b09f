// China futures as data (./holidays/cn-futures.json): the six exchanges with their contract-code
// conventions (case, year digits), and each product's day and night sessions, tick size,
// multiplier, base price limit, listed months and last-trading-day rule, with the sources they come
// from. Read and validated once at start like the other calendar files; the trading days are CN's.
// src/markets/calendar.ts builds the sessions (a night session belongs to the next trading day).

import { readFileSync } from 'node:fs';
import type { FuturesExchange } from '../domain.ts';
import { isClock, isDate, type Problems } from './holidays/validate.ts';

export const FUTURES_EXCHANGES: readonly FuturesExchange[] = ['SHF', 'DCE', 'ZCE', 'CFX', 'INE', 'GFE'];

/** How a contract's last trading day falls in (or before) its delivery month. */
export type LastTradeRule = '15th' | '10th_trading_day' | '3rd_friday' | '2nd_friday' | 'prev_month_end' | 'last_monday';
const LAST_TRADE_RULES: readonly LastTradeRule[] = ['15th', '10th_trading_day', '3rd_friday', '2nd_friday', 'prev_month_end', 'last_monday'];

export interface FuturesProduct {
  product: string;
  exchange: FuturesExchange;
  name: string;
  /** Name of the day-session group (commodity, index, treasury). */
  dayGroup: string;
  day: readonly (readonly [open: string, close: string])[];
  /** HH:MM the night session ends (after midnight when before the night open); null: no night session. */
  nightClose: string | null;
  tickSize: number;
  multiplier: number;
  /** Base daily price limit as a fraction of the previous settlement. */
  limitRatio: number;
  /** Listed delivery months, or CFFEX's stock-index cycle (this month, next month, next two quarter months). */
  months: readonly number[] | 'cffex_index';
  /** Months whose contracts become the main contract; null: the nearest contract rolling a month before expiry. */
  mainMonths: readonly number[] | null;
  lastTrade: LastTradeRule;
  /** First date the product's sessions are known (coverage start or its listing). */
  since: string;
}

export interface FuturesExchangeSpec {
  exchange: FuturesExchange;
  name: string;
  nameEn: string;
  codeCase: 'lower' | 'upper';
  /** Digits of the year in a contract code: 2 (`au2604`), 1 on ZCE (`SR605`). */
  yearDigits: 1 | 2;
}

export interface FuturesCalendarData {
  timezone: string;
  first: string;
  preOpenMinutes: number;
  nightOpen: string;
  sources: Record<string, string>;
  exchanges: readonly FuturesExchangeSpec[];
  products: ReadonlyMap<string, FuturesProduct>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isSessions(value: unknown): value is [string, string][] {
  if (!Array.isArray(value) || value.length === 0) return false;
  let end = '00:00';
  for (const pair of value) {
    if (!Array.isArray(pair) || pair.length !== 2 || !isClock(pair[0]) || !isClock(pair[1]) || pair[0] >= pair[1] || pair[0] < end) return false;
    end = pair[1];
  }
  return true;
}

function isMonths(value: unknown): value is number[] {
  return Array.isArray(value) && value.length > 0 && value.every((m, i) => Number.isInteger(m) && m >= 1 && m <= 12 && (i === 0 || m > value[i - 1]));
}

/** Validates the futures calendar document; every problem is reported with where it is. */
export function validateFuturesCalendar(doc: unknown): { data: FuturesCalendarData; problems: string[] } {
  const problems: Problems = [];
  const d = isRecord(doc) ? doc : {};
  if (d.market !== 'CN_FUTURES') problems.push(`market: '${String(d.market)}' is not CN_FUTURES`);
  if (d.timezone !== 'Asia/Shanghai') problems.push('timezone: Asia/Shanghai is required (the CN trading days are in it)');
  if (d.trading_days !== 'CN') problems.push("trading_days: 'CN' is required (the futures exchanges keep the SSE holidays)");
  const first = isRecord(d.coverage) && isDate(d.coverage.first) ? d.coverage.first : '';
  if (first === '') problems.push('coverage.first: a date (YYYY-MM-DD) is required');
  const preOpen = d.pre_open_minutes;
  if (!Number.isInteger(preOpen) || (preOpen as number) < 0 || (preOpen as number) > 60) problems.push('pre_open_minutes: an integer from 0 to 60 is required');
  if (!isClock(d.night_open)) problems.push(`night_open: '${String(d.night_open)}' is not a time (HH:MM)`);
  const sources: Record<string, string> = {};
  for (const part of ['trading_days', 'sessions', 'night_rule', 'products']) {
    const text = isRecord(d.sources) ? d.sources[part] : undefined;
    if (typeof text !== 'string' || text.trim().length === 0) problems.push(`sources.${part}: say where it comes from`);
    else sources[part] = text;
  }
  const groups = new Map<string, [string, string][]>();
  if (!isRecord(d.day_sessions)) problems.push('day_sessions: an object of named session lists is required');
  else {
    for (const [name, value] of Object.entries(d.day_sessions)) {
      if (isSessions(value)) groups.set(name, value);
      else problems.push(`day_sessions.${name}: ascending, non-overlapping [open, close] HH:MM pairs are required`);
    }
  }
  const exchanges: FuturesExchangeSpec[] = [];
  const rawExchanges = Array.isArray(d.exchanges) ? d.exchanges : [];
  for (const exchange of FUTURES_EXCHANGES) {
    const i = rawExchanges.findIndex((e) => isRecord(e) && e.exchange === exchange);
    const e = rawExchanges[i] as Record<string, unknown> | undefined;
    if (e === undefined) {
      problems.push(`exchanges: ${exchange} is missing`);
      continue;
    }
    if (typeof e.name !== 'string' || typeof e.name_en !== 'string') problems.push(`exchanges[${i}]: name and name_en are required`);
    if (e.code_case !== 'lower' && e.code_case !== 'upper') problems.push(`exchanges[${i}].code_case: 'lower' or 'upper' is required`);
    if (e.year_digits !== 1 && e.year_digits !== 2) problems.push(`exchanges[${i}].year_digits: 1 or 2 is required`);
    exchanges.push({ exchange, name: String(e.name), nameEn: String(e.name_en), codeCase: e.code_case as 'lower' | 'upper', yearDigits: e.year_digits as 1 | 2 });
  }
  const products = new Map<string, FuturesProduct>();
  const rawProducts = Array.isArray(d.products) ? d.products : [];
  if (rawProducts.length === 0) problems.push('products: a non-empty array is required');
  rawProducts.forEach((raw, i) => {
    const at = `products[${i}]`;
    if (!isRecord(raw)) {
      problems.push(`${at}: an object is required`);
      return;
    }
    const spec = exchanges.find((e) => e.exchange === raw.exchange);
    const code = raw.product;
    if (spec === undefined) problems.push(`${at}.exchange: '${String(raw.exchange)}' is not one of ${FUTURES_EXCHANGES.join(', ')}`);
    if (typeof code !== 'string' || !/^[A-Za-z]{1,2}$/.test(code)) problems.push(`${at}.product: one or two letters are required`);
    else if (spec !== undefined && code !== (spec.codeCase === 'lower' ? code.toLowerCase() : code.toUpperCase())) {
      problems.push(`${at}.product: '${code}' is not in ${spec.exchange}'s case (${spec.codeCase})`);
    } else if (products.has(code.toLowerCase())) problems.push(`${at}.product: '${code}' is listed twice`);
    const day = typeof raw.day === 'string' ? groups.get(raw.day) : undefined;
    if (day === undefined) problems.push(`${at}.day: '${String(raw.day)}' is not a day_sessions group`);
    const night = raw.night_close;
    if (night !== null && (!isClock(night) || (night > '03:00' && night < (typeof d.night_open === 'string' ? d.night_open : '21:00')))) {
      problems.push(`${at}.night_close: null or a time after the night open or before 03:00 is required`);
    }
    for (const key of ['tick_size', 'multiplier', 'limit_ratio'] as const) {
      const v = raw[key];
      if (typeof v !== 'number' || !(v > 0) || (key === 'limit_ratio' && v >= 1)) problems.push(`${at}.${key}: a positive number is required${key === 'limit_ratio' ? ' (below 1)' : ''}`);
    }
    if (raw.months !== 'cffex_index' && !isMonths(raw.months)) problems.push(`${at}.months: ascending months 1-12 or 'cffex_index' are required`);
    if (raw.main_months !== null && !isMonths(raw.main_months)) problems.push(`${at}.main_months: null or ascending months 1-12 are required`);
    if (!LAST_TRADE_RULES.includes(raw.last_trade as LastTradeRule)) problems.push(`${at}.last_trade: one of ${LAST_TRADE_RULES.join(', ')} is required`);
    if (!isDate(raw.since) || (first !== '' && raw.since < first)) problems.push(`${at}.since: a date on or after coverage.first is required`);
    if (typeof raw.name !== 'string' || raw.name.length === 0) problems.push(`${at}.name: a name is required`);
    if (typeof code !== 'string' || spec === undefined || day === undefined) return;
    products.set(code.toLowerCase(), {
      product: code, exchange: spec.exchange, name: String(raw.name), dayGroup: String(raw.day), day,
      nightClose: night as string | null, tickSize: Number(raw.tick_size), multiplier: Number(raw.multiplier), limitRatio: Number(raw.limit_ratio),
      months: raw.months as number[] | 'cffex_index', mainMonths: raw.main_months as number[] | null, lastTrade: raw.last_trade as LastTradeRule,
      since: String(raw.since),
    });
  });
  return {
    data: {
      timezone: 'Asia/Shanghai', first, preOpenMinutes: Number(preOpen), nightOpen: String(d.night_open), sources, exchanges, products,
    },
    problems,
  };
}

export function loadFuturesCalendar(url: URL): FuturesCalendarData {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(url, 'utf8'));
  } catch (err) {
    throw new Error(`calendar ${url.pathname}: ${(err as Error).message}`, { cause: err });
  }
  const { data, problems } = validateFuturesCalendar(doc);
  if (problems.length > 0) throw new Error(`calendar ${url.pathname} is invalid:\n  ${problems.join('\n  ')}`);
  return data;
}

export const FUTURES: FuturesCalendarData = loadFuturesCalendar(new URL('./holidays/cn-futures.json', import.meta.url));

export function isFuturesExchange(exchange: string): exchange is FuturesExchange {
  return (FUTURES_EXCHANGES as readonly string[]).includes(exchange);
}

export function futuresExchange(exchange: FuturesExchange): FuturesExchangeSpec {
  return FUTURES.exchanges.find((e) => e.exchange === exchange) as FuturesExchangeSpec;
}

/** A product by its code in any case (`AU`, `au`); undefined when not in the table. */
export function futuresProduct(product: string): FuturesProduct | undefined {
  return FUTURES.products.get(product.toLowerCase());
}

export interface ContractCode {
  /** The code in the exchange's own case: `au2604`, `SR605`, `IF2512`. */
  code: string;
  product: FuturesProduct;
  /** The year digits as written (`26`, or ZCE's `6`). */
  year: string;
  month: number;
}

const CONTRACT = /^([A-Za-z]{1,2})(\d{3,4})$/;

/** A contract code of `exchange`, normalised to its case; undefined when malformed or of a product not listed there. */
export function parseContract(code: string, exchange: FuturesExchange): ContractCode | undefined {
  const m = CONTRACT.exec(code);
  if (m === null) return undefined;
  const spec = futuresExchange(exchange);
  const product = futuresProduct(m[1]);
  if (product === undefined || product.exchange !== exchange || m[2].length !== spec.yearDigits + 2) return undefined;
  const month = Number(m[2].slice(-2));
  if (month < 1 || month > 12) return undefined;
  return { code: `${product.product}${m[2]}`, product, year: m[2].slice(0, -2), month };
}

/** The full year of a contract's delivery month: ZCE's one digit is the nearest year not before `fromYear - 1`. */
export function contractYear(contract: ContractCode, fromYear: number): number {
  if (contract.year.length === 2) return 2000 + Number(contract.year);
  const digit = Number(contract.year);
  let year = fromYear - 1;
  while (year % 10 !== digit) year++;
  return year;
}

/** The code of `product`'s contract for delivery in `year`-`month`, in its exchange's form. */
export function contractCode(product: FuturesProduct, year: number, month: number): string {
  const digits = futuresExchange(product.exchange).yearDigits;
  return `${product.product}${String(year % (digits === 1 ? 10 : 100)).padStart(digits, '0')}${String(month).padStart(2, '0')}`;
}

/** The calendar key of a product's sessions (`CN_FUTURES:au`); `CN_FUTURES` alone is every product's hours together. */
export type FuturesCalendarKey = 'CN_FUTURES' | `CN_FUTURES:${string}`;

export function futuresCalendarKey(product: FuturesProduct): FuturesCalendarKey {
  return `CN_FUTURES:${product.product.toLowerCase()}`;
}
