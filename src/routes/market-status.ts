// GET /v1/market-status: per market, the session state now, and the next regular session open
// and close (epoch ms and local ISO time), from the same calendar as everything else. CN_FUTURES
// is every futures product's hours together (night sessions included), or one product's (`product=`).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Market, Region } from '../domain.ts';
import { AppError } from '../errors.ts';
import { addDays, isMarketOpen, localDate, localParts, sessions, sessionState, TIME_ZONES, type CalendarKey } from '../markets/calendar.ts';
import { FUTURES, futuresCalendarKey, futuresProduct } from '../markets/futures.ts';
import type { RouteContext } from './context.ts';
import { ERROR_RESPONSES } from './errors-doc.ts';

const MARKETS: readonly Market[] = ['CN', 'HK', 'US', 'CN_FUTURES'];
// Longest closure in the tables (CN Spring Festival / National Day) is 9 days; a month is ample.
const SEARCH_DAYS = 31;

/** ISO 8601 exchange-local time with its UTC offset, e.g. 2025-03-10T09:30:00-04:00. */
function localIso(region: CalendarKey, ms: number): string {
  const { date, minutes } = localParts(region, ms);
  const wall = Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) + minutes * 60_000;
  const offset = Math.round((wall - Math.floor(ms / 60_000) * 60_000) / 60_000);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  const hh = String(Math.floor(minutes / 60)).padStart(2, '0');
  const mm = String(minutes % 60).padStart(2, '0');
  const ss = String(Math.floor((ms % 60_000 + 60_000) % 60_000 / 1000)).padStart(2, '0');
  return `${date}T${hh}:${mm}:${ss}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

export interface MarketStatus {
  market: Market;
  product?: string;
  timezone: string;
  session: string;
  is_open: boolean;
  local_time: string;
  next_open: number;
  next_open_local: string;
  next_close: number;
  next_close_local: string;
}

/** Next regular-session start after `now`, and the end of the session now or next. */
function marketStatus(market: Market, region: CalendarKey, now: number): MarketStatus {
  let nextOpen: number | undefined;
  let nextClose: number | undefined;
  const today = localDate(region, now);
  for (let i = 0; i <= SEARCH_DAYS && nextOpen === undefined; i++) {
    for (const w of sessions(region, addDays(today, i))) {
      if (nextClose === undefined && w.end > now) nextClose = w.end;
      if (w.start > now) {
        nextOpen = w.start;
        break;
      }
    }
  }
  const open = nextOpen ?? Number.NaN;
  const close = nextClose ?? Number.NaN;
  return {
    market,
    ...(region.startsWith('CN_FUTURES:') ? { product: futuresProduct(region.slice('CN_FUTURES:'.length))?.product } : {}),
    timezone: market === 'CN_FUTURES' ? FUTURES.timezone : TIME_ZONES[market as Region],
    session: sessionState(region, now),
    is_open: isMarketOpen(region, now),
    local_time: localIso(region, now),
    next_open: open,
    next_open_local: localIso(region, open),
    next_close: close,
    next_close_local: localIso(region, close),
  };
}

const Status = Type.Object({
  market: Type.String(),
  product: Type.Optional(Type.String({ description: 'CN_FUTURES with `product=`: the product' })),
  timezone: Type.String(),
  session: Type.String({ description: 'pre_market, regular, lunch_break, after_hours or closed' }),
  is_open: Type.Boolean({ description: 'In a regular session now' }),
  local_time: Type.String({ description: 'Now, exchange-local ISO 8601 with offset' }),
  next_open: Type.Integer({ description: 'Start of the next regular session after now (after a lunch break: the afternoon session), epoch ms' }),
  next_open_local: Type.String(),
  next_close: Type.Integer({ description: 'End of the regular session in progress, or of the next one, epoch ms' }),
  next_close_local: Type.String(),
});

export default async function marketStatusRoutes(app: FastifyInstance, ctx: RouteContext & { now: () => number }): Promise<void> {
  app.get<{ Querystring: { market?: Market; product?: string } }>('/v1/market-status', {
    schema: {
      operationId: 'getMarketStatus',
      summary: 'Market clock: session now, next open and close',
      description: 'Per market (CN, HK, US, CN_FUTURES; `market` picks one), from the shipped holiday tables. CN_FUTURES is open when any futures product trades (night sessions included); `product=` (with `market=CN_FUTURES`) gives one product\'s clock.',
      tags: ['reference'],
      querystring: Type.Object({
        market: Type.Optional(Type.Union(MARKETS.map((r) => Type.Literal(r)))),
        product: Type.Optional(Type.String({ maxLength: 8, description: 'With market=CN_FUTURES: a product code (`au`, `i`, `SR`, `IF`)' })),
      }),
      response: { 200: Type.Object({ data: Type.Array(Status) }), ...ERROR_RESPONSES },
    },
  }, async (request) => {
    const now = ctx.now();
    const { market, product } = request.query;
    if (product !== undefined) {
      const spec = market === 'CN_FUTURES' ? futuresProduct(product) : undefined;
      if (spec === undefined) {
        throw new AppError('INVALID_PARAMETER', market === 'CN_FUTURES' ? `unknown futures product '${product.slice(0, 8)}'` : 'product applies to market=CN_FUTURES only', {
          details: { parameter: 'product' },
        });
      }
      return { data: [marketStatus('CN_FUTURES', futuresCalendarKey(spec), now)] };
    }
    const markets = market === undefined ? MARKETS : [market];
    return { data: markets.map((m) => marketStatus(m, m, now)) };
  });
}
