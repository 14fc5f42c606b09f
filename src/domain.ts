// Canonical domain shapes shared by the service, the candle engine and every adapter.
// Public JSON field names (snake_case) are fixed by docs/contract.md#shapes-and-units; nothing here
// knows about HTTP or any vendor.

export type Region = 'CN' | 'HK' | 'US';
/** China's futures exchanges by their symbol suffix: SHFE, DCE, ZCE (CZCE), CFFEX, INE, GFEX. */
export type FuturesExchange = 'SHF' | 'DCE' | 'ZCE' | 'CFX' | 'INE' | 'GFE';
export type Exchange = 'SH' | 'SZ' | 'BJ' | 'HK' | 'US' | FuturesExchange;
/** What a plan grants: the three regions, and China futures (region CN) apart. */
export type Market = Region | 'CN_FUTURES';

export const PERIODS = ['1m', '5m', '10m', '15m', '30m', '60m', '1d', '1w', '1M', '1Q', '1Y'] as const;
export type Period = (typeof PERIODS)[number];
export const MINUTE_PERIODS = ['1m', '5m', '10m', '15m', '30m', '60m'] as const;
export type MinutePeriod = (typeof MINUTE_PERIODS)[number];
const DAILY_PERIODS = ['1d', '1w', '1M', '1Q', '1Y'] as const;
export type DailyPeriod = (typeof DAILY_PERIODS)[number];
/** The periods adapters serve; every other period is aggregated locally (docs/contract.md#candle-time-semantics). */
export type BasePeriod = '1m' | '1d';

/** The five of the seed, then the ex-rights extensions (docs/contract.md#ex-factors-and-adjustment). */
export const ADJUST_TYPES = [
  'none', 'forward', 'backward', 'forward_additive', 'backward_additive', 'forward_exrights', 'backward_exrights',
] as const;
export type AdjustType = (typeof ADJUST_TYPES)[number];

export type Session = 'pre_market' | 'regular' | 'lunch_break' | 'after_hours' | 'closed' | 'halted';
export type InstrumentType = 'stock' | 'etf' | 'index' | 'bond' | 'fund' | 'futures' | 'options' | 'other';
export type ExtType = 'cn_equity' | 'hk_equity' | 'us_equity' | 'cn_futures';

/** Columnar candles; all arrays equal length, timestamps strictly ascending (epoch ms). */
export interface Candles {
  timestamp: number[];
  open: number[];
  high: number[];
  low: number[];
  close: number[];
  volume: number[];
  amount: number[];
  prev_close?: number[];
  /** Futures: contracts open at the bar's close. */
  open_interest?: number[];
  /** Futures: the day's settlement price (daily bars; minute bars of a settled day carry it too). */
  settlement_price?: number[];
}

/**
 * An event's parts, per share, for the ex-rights reference price
 * ref = (P_prev − cash_dividend + rights_price·rights_ratio) / (1 + bonus_ratio + rights_ratio).
 * `parts_known: false` (or absent) means only the ratio is known: the ex-rights methods then use
 * P / ex_factor for that event. A split of n for 1 is bonus_ratio n − 1; a consolidation of n
 * into 1 is bonus_ratio 1/n − 1.
 */
export interface ExFactorParts {
  cash_dividend?: number;
  bonus_ratio?: number;
  rights_ratio?: number;
  rights_price?: number;
  parts_known?: boolean;
}

export interface ExFactor extends ExFactorParts {
  /** 00:00 exchange-local of the ex-date, epoch ms. */
  timestamp: number;
  /** P_prev / ref, per event (not cumulative). */
  ex_factor: number;
}

export interface QuoteExt {
  type: ExtType;
  name: string;
  amplitude: number;
  change_amount: number;
  change_pct: number;
  turnover_rate: number | null;
  /** Futures: contracts open now. */
  open_interest?: number;
  /** Futures: today's settlement price, null until the exchange settles the day. */
  settlement_price?: number | null;
  /** Futures: the previous trading day's settlement price (limits and change are from it). */
  prev_settlement_price?: number;
}

export interface Quote {
  symbol: string;
  region: Region;
  last_price: number;
  open: number;
  high: number;
  low: number;
  prev_close: number;
  volume: number;
  amount: number;
  timestamp: number;
  session?: Session;
  ext: QuoteExt;
}

export interface Depth {
  symbol: string;
  region: Region;
  timestamp: number;
  bid_prices: number[];
  bid_volumes: number[];
  ask_prices: number[];
  ask_volumes: number[];
}

export interface InstrumentExt {
  type: ExtType;
  float_shares: number | null;
  limit_down: number | null;
  limit_up: number | null;
  listing_date: string | null;
  tick_size: number;
  total_shares: number | null;
  lot_size?: number;
  /** Futures: contract multiplier (units of the underlying per contract). */
  multiplier?: number;
  /** Futures: last trading day, YYYY-MM-DD. */
  last_trade_date?: string;
  /** Futures: the product code (`au`, `SR`, `IF`). */
  product?: string;
  /** Futures: whether this contract is its product's main (most traded) contract now. */
  main_contract?: boolean;
  /**
   * Listing status, where known: `listed` (trading or able to), `suspended` (listed, trading
   * halted), `delisted` (no longer listed: the vendor lists it as delisted, or stopped knowing a
   * symbol the history store holds). Absent: the vendor does not say.
   */
  status?: InstrumentStatus;
  /** Delisting date, YYYY-MM-DD, where the vendor gives one. */
  delisting_date?: string | null;
}

export const INSTRUMENT_STATUSES = ['listed', 'suspended', 'delisted'] as const;
export type InstrumentStatus = (typeof INSTRUMENT_STATUSES)[number];

export interface Instrument {
  code: string;
  exchange: Exchange;
  name: string;
  region: Region;
  symbol: string;
  type: InstrumentType;
  ext: InstrumentExt;
}

export const POOL_IDS = ['CN_Stock', 'CN_ETF', 'HK_Stock', 'US_Stock', 'CN_Index', 'HK_Index', 'US_Index'] as const;
export type PoolId = (typeof POOL_IDS)[number];

export interface PoolSummary {
  id: PoolId;
  name: string;
  region: Region;
  category: string;
  symbol_count: number;
}

export interface PoolDetail extends PoolSummary {
  symbols: string[];
  /** Answered from the recorder's snapshots (?as_of): the recorded day used, and the first recorded one. */
  as_of?: string;
  recorded_from?: string;
}

/** A symbol parsed and normalised, e.g. `700.hk` → { symbol: '00700.HK', code: '00700', exchange: 'HK', region: 'HK' }. */
export interface SymbolRef {
  symbol: string;
  code: string;
  exchange: Exchange;
  region: Region;
}
