// Quotes, depth and instrument metadata, all read off the same session day (market.ts), so a
// quote's last_price is the newest 1m close and today's daily close, and depth sits around it.

import type { Depth, ExtType, Instrument, Quote, Region } from '../../src/domain.ts';
import { localDate, sessionState } from '../../src/markets/calendar.ts';
import { lastIndexOnOrBefore, shareMultiplier } from './daily.ts';
import type { SimInstrument } from './instruments.ts';
import { limitPrices } from './limits.ts';
import type { SessionDay } from './market.ts';
import { rngFor } from './random.ts';
import { fixDecimals, priceDecimals, stepDown, stepUp, tickSizeAt } from './ticks.ts';

const EXT_TYPE: Record<Region, ExtType> = { CN: 'cn_equity', HK: 'hk_equity', US: 'us_equity' };
const DEPTH_LEVELS = 5;

function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/** The last traded price of the day (the previous close while suspended). */
function lastPrice(day: SessionDay): number {
  return day.bar?.close ?? day.prevClose;
}

export function buildQuote(inst: SimInstrument, day: SessionDay, now: number): Quote {
  const last = lastPrice(day);
  const prev = day.prevClose;
  const bar = day.bar;
  const open = bar?.open ?? last;
  const high = bar?.high ?? last;
  const low = bar?.low ?? last;
  const volume = bar?.volume ?? 0;
  const decimals = priceDecimals(inst);
  const changeAmount = fixDecimals(last - prev, decimals);
  const floatShares = inst.floatShares * shareMultiplier(day.history, day.date);
  // A suspended instrument shows as halted for the whole of its suspended day.
  const session = day.suspended && localDate(inst.region, now) === day.date ? 'halted' : sessionState(inst.region, now);
  return {
    symbol: inst.symbol,
    region: inst.region,
    last_price: last,
    open,
    high,
    low,
    prev_close: prev,
    volume,
    amount: bar?.amount ?? 0,
    timestamp: day.lastTradeTime,
    session,
    ext: {
      type: EXT_TYPE[inst.region],
      name: inst.name,
      amplitude: round6((high - low) / prev),
      change_amount: changeAmount,
      change_pct: round6(changeAmount / prev),
      // An index has no float of its own to turn over.
      turnover_rate: inst.type === 'index' ? null : round6(volume / floatShares),
    },
  };
}

/** Five levels around the last price; a sealed limit leaves one side of the book empty. */
export function buildDepth(inst: SimInstrument, day: SessionDay, now: number): Depth {
  const depth: Depth = {
    symbol: inst.symbol, region: inst.region, timestamp: day.lastTradeTime,
    bid_prices: [], bid_volumes: [], ask_prices: [], ask_volumes: [],
  };
  if (day.suspended) return depth;
  const last = lastPrice(day);
  const limits = limitPrices(inst, day.prevClose);
  const floor = limits?.down ?? 0;
  const ceiling = limits?.up ?? Infinity;
  const rng = rngFor(inst.symbol, Math.floor(now / 60_000), 'depth');
  // Sized from the last complete day's volume, so nothing after now leaks into the book.
  const complete = lastIndexOnOrBefore(day.history, day.date) - (day.inProgress && !day.suspended ? 1 : 0);
  const dayVolume = complete >= 0 ? day.history.volume[complete] : inst.lotSize;
  const typicalLots = Math.max(1, dayVolume / inst.lotSize / 800);
  const lots = (): number => Math.max(1, Math.round(typicalLots * Math.exp(0.7 * rng.normal())));
  const atUp = limits !== undefined && last >= limits.up;
  const atDown = limits !== undefined && last <= limits.down;

  let bid: number | undefined;
  let ask: number | undefined;
  if (atUp) bid = last;
  else if (atDown) ask = last;
  else if (rng.next() < 0.5 || stepDown(inst, last) === undefined) {
    bid = last;
    ask = stepUp(inst, last);
  } else {
    bid = stepDown(inst, last);
    ask = last;
  }
  for (let level = 0; level < DEPTH_LEVELS && bid !== undefined && bid >= floor; level++) {
    depth.bid_prices.push(bid);
    // The sealed side of a limit carries the queue of orders waiting at the limit.
    depth.bid_volumes.push((atUp && level === 0 ? 30 * lots() : lots()) * inst.lotSize);
    bid = stepDown(inst, bid);
  }
  for (let level = 0; level < DEPTH_LEVELS && ask !== undefined && ask <= ceiling; level++) {
    depth.ask_prices.push(ask);
    depth.ask_volumes.push((atDown && level === 0 ? 30 * lots() : lots()) * inst.lotSize);
    ask = stepUp(inst, ask);
  }
  return depth;
}

export function buildInstrument(inst: SimInstrument, day: SessionDay | undefined): Instrument {
  if (inst.type === 'index') return indexInstrument(inst);
  const shares = day === undefined ? 1 : shareMultiplier(day.history, day.date);
  const limits = day === undefined ? undefined : limitPrices(inst, day.prevClose);
  const price = day === undefined ? inst.price : lastPrice(day);
  return {
    code: inst.code,
    exchange: inst.exchange,
    name: inst.name,
    region: inst.region,
    symbol: inst.symbol,
    type: inst.type,
    ext: {
      type: EXT_TYPE[inst.region],
      float_shares: Math.round(inst.floatShares * shares),
      limit_down: limits?.down ?? null,
      limit_up: limits?.up ?? null,
      listing_date: inst.listingDate,
      tick_size: tickSizeAt(inst, price),
      total_shares: Math.round(inst.totalShares * shares),
      lot_size: inst.lotSize,
    },
  };
}

/** An index: no shares, no price limits, no board lot; levels tick in hundredths. */
function indexInstrument(inst: SimInstrument): Instrument {
  return {
    code: inst.code,
    exchange: inst.exchange,
    name: inst.name,
    region: inst.region,
    symbol: inst.symbol,
    type: 'index',
    ext: {
      type: EXT_TYPE[inst.region], float_shares: null, limit_down: null, limit_up: null,
      listing_date: inst.listingDate, tick_size: tickSizeAt(inst, inst.price), total_shares: null,
    },
  };
}
