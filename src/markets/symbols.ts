// Symbol parsing and normalisation (docs/contract.md#symbols-regions-pools) and comma-list parsing.
import type { Exchange, Market, Region, SymbolRef } from '../domain.ts';
import type { CalendarKey } from './calendar.ts';
import { futuresCalendarKey, futuresProduct, isFuturesExchange, parseContract } from './futures.ts';
import { HK_INDEX_CODES } from './indices.ts';

const REGION_OF: Record<Exchange, Region> = {
  SH: 'CN', SZ: 'CN', BJ: 'CN', HK: 'HK', US: 'US',
  // China futures (docs/futures.md): contracts like au2604.SHF, SR605.ZCE, IF2512.CFX.
  SHF: 'CN', DCE: 'CN', ZCE: 'CN', CFX: 'CN', INE: 'CN', GFE: 'CN',
};

// Code shapes per exchange: CN six digits; HK one to five digits (padded to five) or one of the HK
// index codes in letters (HSI, HSCEI, HSTECH; case-insensitive); US tickers with letters, digits
// and inner dots/dashes (BRK.B, BF-B), at most 12 characters.
const CN_CODE = /^\d{6}$/;
const HK_CODE = /^\d{1,5}$/;
const US_CODE = /^[A-Z][A-Z0-9]*(?:[.-][A-Z0-9]+)*$/;
const MAX_SYMBOL_LENGTH = 24;

export function regionOf(exchange: Exchange): Region {
  return REGION_OF[exchange];
}

/** Parse one symbol; `undefined` when it is not a well-formed `<code>.<exchange>`. */
export function parseSymbol(input: string): SymbolRef | undefined {
  const text = input.trim();
  if (text.length === 0 || text.length > MAX_SYMBOL_LENGTH) return undefined;
  const dot = text.lastIndexOf('.');
  if (dot <= 0 || dot === text.length - 1) return undefined;
  const suffix = text.slice(dot + 1).toUpperCase();
  if (!(suffix in REGION_OF)) return undefined;
  const exchange = suffix as Exchange;
  let code = text.slice(0, dot);
  if (exchange === 'HK') {
    if (HK_INDEX_CODES.has(code.toUpperCase())) code = code.toUpperCase();
    else if (!HK_CODE.test(code)) return undefined;
    else code = code.padStart(5, '0');
  } else if (exchange === 'US') {
    code = code.toUpperCase();
    if (code.length > 12 || !US_CODE.test(code)) return undefined;
  } else if (isFuturesExchange(exchange)) {
    // A contract of a product in the futures table, in its exchange's case and year digits.
    const contract = parseContract(code, exchange);
    if (contract === undefined) return undefined;
    code = contract.code;
  } else if (!CN_CODE.test(code)) {
    return undefined;
  }
  return { symbol: `${code}.${exchange}`, code, exchange, region: REGION_OF[exchange] };
}

/** The plan market a symbol needs: its region, or CN_FUTURES for a futures contract. */
export function marketOf(ref: SymbolRef): Market {
  return isFuturesExchange(ref.exchange) ? 'CN_FUTURES' : ref.region;
}

/** The calendar of a symbol's sessions: its region's, or its futures product's (night sessions included). */
export function calendarKeyOf(ref: SymbolRef): CalendarKey {
  if (!isFuturesExchange(ref.exchange)) return ref.region;
  const product = futuresProduct(/^[A-Za-z]+/.exec(ref.code)?.[0] ?? '');
  return product === undefined ? ref.region : futuresCalendarKey(product);
}

/**
 * A comma-separated list: items trimmed, empty items ignored, duplicates dropped (the first
 * occurrence keeps its place). Arrays (POST bodies, repeated query keys) are flattened the same way.
 */
export function parseList(input: string | readonly string[] | undefined): string[] {
  if (input === undefined) return [];
  const parts = typeof input === 'string' ? input.split(',') : input.flatMap((item) => String(item).split(','));
  const seen = new Set<string>();
  const out: string[] = [];
  for (const part of parts) {
    const item = part.trim();
    if (item.length === 0 || seen.has(item)) continue;
    seen.add(item);
    out.push(item);
  }
  return out;
}

export interface ParsedSymbols {
  refs: SymbolRef[];
  invalid: string[];
}

/** Parse a list of symbols, de-duplicating after normalisation (`700.HK` and `00700.HK` are one). */
export function parseSymbolList(items: readonly string[]): ParsedSymbols {
  const refs: SymbolRef[] = [];
  const invalid: string[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const ref = parseSymbol(item);
    if (ref === undefined) {
      invalid.push(item);
      continue;
    }
    if (seen.has(ref.symbol)) continue;
    seen.add(ref.symbol);
    refs.push(ref);
  }
  return { refs, invalid };
}
