// Which symbols are indices (docs/contract.md#symbols-regions-pools). CN index codes collide with stock codes
// (`000001.SH` is the SSE Composite, `000001.SZ` Ping An Bank), so the exchange suffix decides:
// on Shanghai every 000xxx code is an index (its stocks are 6xxxxx), on Shenzhen 399xxx, on
// Beijing 899xxx. HK and US indices are letter symbols from a fixed list, none of them a listed
// ticker (HK tickers are digits; the US list is checked against the instrument lists in tests).
import type { Exchange } from '../domain.ts';

/** HK index codes, the only HK symbols that are not digits: Hang Seng, HSCEI, Hang Seng TECH. */
export const HK_INDEX_CODES: ReadonlySet<string> = new Set(['HSI', 'HSCEI', 'HSTECH']);
/** US index codes: S&P 500, Nasdaq-100, Dow Jones Industrial Average. */
export const US_INDEX_CODES: ReadonlySet<string> = new Set(['SPX', 'NDX', 'DJI']);

const CN_INDEX_PREFIX: Partial<Record<Exchange, string>> = { SH: '000', SZ: '399', BJ: '899' };

/** True when `<code>.<exchange>` (normalised) names an index rather than a listed security. */
export function isIndexCode(code: string, exchange: Exchange): boolean {
  if (exchange === 'HK') return HK_INDEX_CODES.has(code);
  if (exchange === 'US') return US_INDEX_CODES.has(code);
  const prefix = CN_INDEX_PREFIX[exchange];
  return prefix !== undefined && code.length === 6 && code.startsWith(prefix);
}

/** The same test for a parsed symbol. */
export function isIndexSymbol(ref: { code: string; exchange: Exchange }): boolean {
  return isIndexCode(ref.code, ref.exchange);
}
