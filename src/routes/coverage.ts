// GET /v1/coverage: what the candle store holds of each symbol against the trading calendar
// (store/coverage-report.ts): the first and last stored bar, the sessions expected, stored,
// covered without a bar, and the missing dates. Read from the store only: no vendor call.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { BasePeriod, Region, SymbolRef } from '../domain.ts';
import { AppError } from '../errors.ts';
import { localMidnight, addDays } from '../markets/calendar.ts';
import type { History } from '../plugins/history.ts';
import { dataOf } from '../schemas.ts';
import { coverageReport, MISSING_LIST_CAP, type CoverageReport } from '../store/coverage-report.ts';
import { calendarKeyOf } from '../markets/symbols.ts';
import { floorMs } from '../store/labels.ts';
import { access, periodFeature, requireAccess, symbolList } from './common.ts';
import type { AppContext } from './context.ts';
import { ERROR_RESPONSES } from './errors-doc.ts';

/** What the store routes need beyond a route's context: the store and each market's candle chain. */
export interface StoreRouteContext extends AppContext {
  history: History;
  /** Adapter ids serving candles for `region`, in routing order. */
  candleChain: (region: Region) => readonly string[];
  /** Adapter ids whose data is simulated. */
  simulated: ReadonlySet<string>;
}

const DateParam = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD, exchange-local, inclusive' });

export const CoverageQuery = Type.Object({
  symbols: Type.String({ minLength: 1, description: 'Comma-separated symbols, e.g. 600519.SH,00700.HK,AAPL.US' }),
  period: Type.Union([Type.Literal('1d'), Type.Literal('1m')], { description: 'The stored base period' }),
  start_date: Type.Optional(DateParam),
  end_date: Type.Optional({ ...DateParam, description: 'YYYY-MM-DD, exchange-local, inclusive. Default (and at most): the last closed session' }),
});

const Report = Type.Object({
  adapter: Type.Union([Type.String(), Type.Null()], { description: 'The adapter whose stored series this is (the first of the market\'s routing that has one); null: nothing stored' }),
  first: Type.Union([Type.Integer(), Type.Null()], { description: 'Label (epoch ms) of the oldest stored bar, any date' }),
  last: Type.Union([Type.Integer(), Type.Null()], { description: 'Label (epoch ms) of the newest stored bar, any date' }),
  start_date: Type.Union([Type.String(), Type.Null()], { description: 'The range counted: start_date, else the oldest stored bar\'s date; null when nothing is stored and no start_date was given' }),
  end_date: Type.Union([Type.String(), Type.Null()], { description: 'end_date, at most the last closed session' }),
  expected: Type.Integer({ description: 'Sessions the trading calendar expects in the range' }),
  stored: Type.Integer({ description: 'Sessions with bars stored' }),
  empty: Type.Integer({ description: 'Sessions the store knows to hold no bar (the vendor had none: a suspension, a closure the calendar lacks)' }),
  missing_count: Type.Integer({ description: 'Sessions neither stored nor known empty: expected = stored + empty + missing_count' }),
  missing: Type.Array(Type.String(), { description: `The missing sessions (dates), oldest first, at most ${MISSING_LIST_CAP}` }),
  holidays: Type.Array(Type.Object({ date: Type.String(), name: Type.String() }), { description: 'Weekdays in the range the exchange was closed, with the calendar\'s reason: why they are not expected' }),
});

interface CoverageInput {
  symbols: string;
  period: BasePeriod;
  start_date?: string;
  end_date?: string;
}

function dates(query: CoverageInput): void {
  for (const name of ['start_date', 'end_date'] as const) {
    const value = query[name];
    if (value !== undefined && !Number.isFinite(Date.parse(`${value}T00:00:00Z`))) {
      throw new AppError('INVALID_PARAMETER', `${name} is not a date: ${value}`, { details: { parameter: name } });
    }
  }
  if (query.start_date !== undefined && query.end_date !== undefined && query.start_date > query.end_date) {
    throw new AppError('INVALID_TIME_RANGE', 'start_date must not be after end_date', { details: { start_date: query.start_date, end_date: query.end_date } });
  }
}

/** The report of one symbol: the first adapter of its market's chain that stores the series. */
async function reportOf(ctx: StoreRouteContext, ref: SymbolRef, query: CoverageInput): Promise<CoverageReport> {
  const store = ctx.history.store!;
  const period = query.period;
  for (const adapter of ctx.candleChain(ref.region)) {
    if (ctx.history.offFor.has(adapter)) continue;
    const key = { adapter, symbol: ref.symbol, period };
    const segments = await store.storedCoverage!(key);
    if (segments.length === 0) continue;
    const bars = await store.storedBars!(key, floorMs(ref.region), localMidnight(ref.region, addDays(query.end_date ?? '9999-12-30', 1)) - 1);
    return coverageReport({ region: calendarKeyOf(ref), period, adapter, segments, timestamps: bars.timestamp, startDate: query.start_date, endDate: query.end_date, now: ctx.now() });
  }
  return coverageReport({ region: calendarKeyOf(ref), period, adapter: null, segments: [], timestamps: [], startDate: query.start_date, endDate: query.end_date, now: ctx.now() });
}

export default async function coverageRoutes(app: FastifyInstance, ctx: StoreRouteContext): Promise<void> {
  app.get<{ Querystring: CoverageInput }>('/v1/coverage', {
    config: access((request) => {
      const query = request.query as CoverageInput;
      const symbols = symbolList(query.symbols);
      return { features: [periodFeature(query.period)], symbols, explicitCount: symbols.length };
    }),
    schema: {
      operationId: 'getCoverage',
      summary: 'What the candle store holds, against the trading calendar',
      description: 'Per symbol: the first and last stored bar, and for the range (start_date…end_date, exchange-local; default from the oldest stored bar to the last closed session) the sessions the calendar expects, those stored, those known to hold no bar, and the missing dates (a capped list, with missing_count). Needs klines_daily (1d) or klines_minute (1m). Answered from the store alone; 404 NOT_FOUND when the server keeps no history (history.enabled false).',
      tags: ['klines'],
      querystring: CoverageQuery,
      response: { 200: dataOf(Type.Record(Type.String(), Report)), ...ERROR_RESPONSES },
    },
  }, async (request, reply) => {
    const refs = symbolList(request.query.symbols);
    dates(request.query);
    requireAccess(request);
    if (ctx.history.store?.storedCoverage === undefined) throw new AppError('NOT_FOUND', 'this server keeps no candle history (history.enabled is false)');
    const data: Record<string, CoverageReport> = {};
    for (const ref of refs) data[ref.symbol] = await reportOf(ctx, ref, request.query);
    reply.header('cache-control', 'no-store');
    return { data };
  });
}
