// GET /v1/calendar: trading days of one market with their regular sessions (local times and epoch
// ms), shortened days and the weekday closures between, from the shipped tables (the same ones that
// drive sessions, bar labels, aggregation and the sim). Days outside the tables' coverage are listed
// in `unknown` and nowhere else: no session is ever guessed for them. Reference data: any valid key.
// CN_FUTURES: CN's trading days with one product's sessions (`product=au`), or every product's hours
// together; a night session is listed under the trading day it belongs to (the next one).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Region } from '../domain.ts';
import { AppError } from '../errors.ts';
import {
  addDays, calendarCoverage, dayStatus, holidayName, localDate, localParts, sessions, shortDay, TIME_ZONES, type CalendarKey,
} from '../markets/calendar.ts';
import { FUTURES, futuresCalendarKey, futuresProduct } from '../markets/futures.ts';
import type { RouteContext } from './context.ts';
import { ERROR_RESPONSES } from './errors-doc.ts';

const MAX_DAYS = 731;
const DEFAULT_DAYS = 30;
const Market = Type.Union([Type.Literal('CN'), Type.Literal('HK'), Type.Literal('US'), Type.Literal('CN_FUTURES')]);
type CalendarMarket = Region | 'CN_FUTURES';
const DateParam = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD, exchange-local' });

/** Exchange-local wall time HH:MM of an instant. */
function localHhmm(region: CalendarKey, ms: number): string {
  const minutes = localParts(region, ms).minutes;
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

const SessionSchema = Type.Object({
  open: Type.String({ description: 'Local HH:MM' }),
  close: Type.String({ description: 'Local HH:MM' }),
  open_time: Type.Integer({ description: 'Epoch ms' }),
  close_time: Type.Integer({ description: 'Epoch ms' }),
  night: Type.Optional(Type.Boolean({ description: 'CN_FUTURES: a night session, held on the evening of the previous trading day (open_time says which)' })),
});

const TradingDay = Type.Object({
  date: Type.String({ format: 'date' }),
  open: Type.String({ description: 'Local HH:MM of the first session' }),
  close: Type.String({ description: 'Local HH:MM of the last session end' }),
  half_day: Type.Boolean({ description: 'Early close (HK eves: morning session only; NYSE 13:00, 14:00 before 1993; unscheduled early closes)' }),
  note: Type.Optional(Type.String({ description: 'Why the day is shortened (early close or late open)' })),
  sessions: Type.Array(SessionSchema),
});

const CalendarBody = Type.Object({
  market: Market,
  product: Type.Optional(Type.String({ description: 'CN_FUTURES: the product whose sessions are listed' })),
  timezone: Type.String(),
  start: Type.String({ format: 'date' }),
  end: Type.String({ format: 'date' }),
  coverage: Type.Object({ first: Type.String({ format: 'date' }), last: Type.String({ format: 'date' }) }, {
    description: "First and last date (inclusive) the market's tables cover: CN from 1990-12-19, HK and US from 1986-01-01, each through its latest published year",
  }),
  data: Type.Array(TradingDay, { description: 'Trading days inside coverage' }),
  holidays: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), name: Type.String() }), {
    description: 'Weekdays inside coverage on which the exchange was or will be closed (holidays, unscheduled closures)',
  }),
  unknown: Type.Array(Type.String({ format: 'date' }), {
    description: 'Every date of the range outside coverage: nothing is known of them, so they are neither trading days nor holidays',
  }),
});

function checkedDate(name: string, value: string): string {
  try {
    return addDays(value, 0);
  } catch {
    throw new AppError('INVALID_PARAMETER', `${name} '${value.slice(0, 12)}' is not a calendar date (YYYY-MM-DD)`, { details: { parameter: name } });
  }
}

function dayNumber(date: string): number {
  return Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) / 86_400_000;
}

/** The calendar a request names: a region's, or CN_FUTURES' (one product's, or every product's together). */
function calendarOf(market: CalendarMarket, product: string | undefined): CalendarKey {
  if (market !== 'CN_FUTURES') {
    if (product !== undefined) throw new AppError('INVALID_PARAMETER', 'product applies to market=CN_FUTURES only', { details: { parameter: 'product' } });
    return market;
  }
  if (product === undefined) return 'CN_FUTURES';
  const spec = futuresProduct(product);
  if (spec === undefined) {
    throw new AppError('INVALID_PARAMETER', `unknown futures product '${product.slice(0, 8)}'; known: ${[...FUTURES.products.values()].map((p) => p.product).join(', ')}`, {
      details: { parameter: 'product' },
    });
  }
  return futuresCalendarKey(spec);
}

export default async function calendarRoutes(app: FastifyInstance, ctx: RouteContext & { now: () => number }): Promise<void> {
  app.get<{ Querystring: { market: CalendarMarket; product?: string; start?: string; end?: string } }>('/v1/calendar', {
    schema: {
      operationId: 'getCalendar',
      summary: 'Trading days with their sessions',
      description: `Trading days of one market between start and end (inclusive; default: today and the next ${DEFAULT_DAYS} days; at most ${MAX_DAYS} days), with local session times (historical hours where they changed), shortened days and the weekday closures. From the shipped tables, which cover CN from 1990-12-19, HK and US from 1986 through each market's latest published year; every date outside that coverage is listed in \`unknown\` and never given a session. \`market=CN_FUTURES\` (from 2020-07-20, on CN's trading days) lists a product's sessions with \`product=\` (or every product's hours together), each night session (\`night: true\`, held on the previous trading day's evening) under the trading day it belongs to: a Friday night under Monday, none on the eve of a holiday.`,
      tags: ['reference'],
      querystring: Type.Object({
        market: Market,
        product: Type.Optional(Type.String({ maxLength: 8, description: 'CN_FUTURES only: a product code (`au`, `i`, `SR`, `IF`); without it every product\'s hours together' })),
        start: Type.Optional(DateParam),
        end: Type.Optional(DateParam),
      }),
      response: { 200: CalendarBody, ...ERROR_RESPONSES },
    },
  }, async (request) => {
    const { market: requested } = request.query;
    const market = calendarOf(requested, request.query.product);
    const start = request.query.start === undefined ? localDate(market, ctx.now()) : checkedDate('start', request.query.start);
    const end = request.query.end === undefined ? addDays(start, DEFAULT_DAYS) : checkedDate('end', request.query.end);
    const span = dayNumber(end) - dayNumber(start);
    if (span < 0) throw new AppError('INVALID_TIME_RANGE', 'start must not be after end', { details: { start, end } });
    if (span >= MAX_DAYS) throw new AppError('INVALID_TIME_RANGE', `at most ${MAX_DAYS} days per request`, { details: { start, end } });
    const data = [];
    const holidays = [];
    const unknown = [];
    for (let date = start; date <= end; date = addDays(date, 1)) {
      const status = dayStatus(market, date);
      if (status === 'unknown') {
        unknown.push(date);
        continue;
      }
      if (status === 'closed') {
        const name = holidayName(market, date);
        if (name !== undefined) holidays.push({ date, name });
        continue;
      }
      const windows = sessions(market, date);
      const short = shortDay(market, date);
      data.push({
        date,
        open: localHhmm(market, windows[0].start),
        close: localHhmm(market, windows[windows.length - 1].end),
        half_day: short?.close !== undefined,
        ...(short === undefined ? {} : { note: short.name }),
        sessions: windows.map((w) => ({
          open: localHhmm(market, w.start), close: localHhmm(market, w.end), open_time: w.start, close_time: w.end,
          ...(requested === 'CN_FUTURES' ? { night: localDate(market, w.start) !== date } : {}),
        })),
      });
    }
    const product = requested === 'CN_FUTURES' && request.query.product !== undefined ? futuresProduct(request.query.product)?.product : undefined;
    return {
      market: requested, ...(product === undefined ? {} : { product }), timezone: requested === 'CN_FUTURES' ? FUTURES.timezone : TIME_ZONES[requested],
      start, end, coverage: calendarCoverage(market), data, holidays, unknown,
    };
  });
}
