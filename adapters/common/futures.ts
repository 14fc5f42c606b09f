// A China futures contract as every adapter resolves it (by the product table), and the price
// rules the adapters share: prices on the product's tick, a day's volume-weighted average price.
import type { SymbolRef } from '../../src/domain.ts';
import type { CalendarKey } from '../../src/markets/calendar.ts';
import { futuresCalendarKey, isFuturesExchange, parseContract, type ContractCode, type FuturesProduct } from '../../src/markets/futures.ts';

export interface FuturesContract {
  ref: SymbolRef;
  product: FuturesProduct;
  /** The product's calendar (`CN_FUTURES:au`): its day and night sessions. */
  key: CalendarKey;
  code: ContractCode;
}

/** The contract a futures symbol names (by the product table); undefined for any other symbol. */
export function futuresContract(ref: SymbolRef): FuturesContract | undefined {
  if (!isFuturesExchange(ref.exchange)) return undefined;
  const code = parseContract(ref.code, ref.exchange);
  return code === undefined ? undefined : { ref, product: code.product, key: futuresCalendarKey(code.product), code };
}

function decimalsOf(tick: number): number {
  return Math.max(0, Math.ceil(-Math.log10(tick) - 1e-9));
}

/** `price` rounded to the nearest multiple of `tick`, without binary noise. */
export function onTick(price: number, tick: number): number {
  return Number((Math.round(price / tick) * tick).toFixed(decimalsOf(tick)));
}

/** The volume-weighted average price of `amount` yuan over `volume` contracts, on the tick; undefined without volume. */
export function vwap(c: Pick<FuturesContract, 'product'>, amount: number, volume: number): number | undefined {
  return volume > 0 && amount > 0 ? onTick(amount / (volume * c.product.multiplier), c.product.tickSize) : undefined;
}
