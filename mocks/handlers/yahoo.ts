// msw handlers emulating Yahoo's v8 chart API over the fixtures in mocks/fixtures/yahoo:
// `range=1d` answers the latest session, `period1`/`period2` (Unix seconds, end exclusive) cut
// rows and events like Yahoo does, and an unknown ticker gets Yahoo's 404 "Not Found" envelope.

import { http, HttpResponse, type HttpHandler } from 'msw';
import { capture, fixture, listParam, type CapturedRequest } from './support.ts';

export const YAHOO_TEST_BASE = 'https://yahoo.test';

/** The captured AAPL timeseries answers per frequency: `financials-timeseries-aapl-<what><frequency>.json`. */
const TIMESERIES_CAPTURES = ['', 'balance-sheet-', 'cash-flow-'];
type TimeseriesBody = { timeseries: { result: Array<{ meta: { type: string[] } }>; error: null } };

interface ChartResult {
  meta: Record<string, unknown>;
  timestamp?: number[];
  events?: Record<string, Record<string, { date: number }>>;
  indicators: { quote: Array<Record<string, Array<number | null>>>; adjclose?: Array<{ adjclose: Array<number | null> }> };
}
type ChartBody = { chart: { result: ChartResult[]; error: null } };

const FIXTURES: Record<string, { latest: string; daily?: string; minute?: string }> = {
  AAPL: { latest: 'chart-latest-aapl', daily: 'chart-daily-aapl', minute: 'chart-minute-aapl' },
  '0700.HK': { latest: 'chart-latest-hk' },
};

/** Keeps rows and events with period1 ≤ t < period2, and sets chartPreviousClose, as Yahoo does. */
export function cutChart(body: ChartBody, period1: number, period2: number): ChartBody {
  const result = body.chart.result[0];
  const stamps = result.timestamp ?? [];
  const keep = stamps.map((t, i) => (t >= period1 && t < period2 ? i : -1)).filter((i) => i >= 0);
  const pick = <T>(column: T[]) => keep.map((i) => column[i]);
  // chartPreviousClose is the close before the answer's first row, when the fixture has that row.
  const before = stamps.reduce((last, t, i) => (t < period1 ? i : last), -1);
  const previous = before >= 0 ? result.indicators.quote[0].close?.[before] : undefined;
  const meta = previous === undefined || previous === null ? result.meta : { ...result.meta, chartPreviousClose: previous };
  const cut: ChartResult = { meta, indicators: { quote: [{}] } };
  if (keep.length > 0) {
    cut.timestamp = pick(stamps);
    cut.indicators.quote = [Object.fromEntries(Object.entries(result.indicators.quote[0]).map(([k, v]) => [k, pick(v)]))];
    if (result.indicators.adjclose) cut.indicators.adjclose = [{ adjclose: pick(result.indicators.adjclose[0].adjclose) }];
  }
  if (result.events) {
    cut.events = Object.fromEntries(Object.entries(result.events).map(([kind, byTs]) =>
      [kind, Object.fromEntries(Object.entries(byTs).filter(([, e]) => e.date >= period1 && e.date < period2))]));
  }
  return { chart: { result: [cut], error: null } };
}

export function yahooHandlers(log: CapturedRequest[] = [], base = YAHOO_TEST_BASE): HttpHandler[] {
  return [
    http.get(`${base}/v8/finance/chart/:ticker`, async ({ request, params }) => {
      const url = await capture(log, request);
      const known = FIXTURES[String(params.ticker)];
      const interval = url.searchParams.get('interval');
      const name = known === undefined ? undefined
        : url.searchParams.get('range') === '1d' ? (interval === '1m' ? known.minute : known.latest)
          : interval === '1m' ? known.minute : known.daily;
      if (name === undefined) return HttpResponse.json(fixture('yahoo', 'chart-not-found'), { status: 404 });
      const body = fixture<ChartBody>('yahoo', name);
      if (url.searchParams.get('range') !== null) return HttpResponse.json(body);
      return HttpResponse.json(cutChart(body, Number(url.searchParams.get('period1')), Number(url.searchParams.get('period2'))));
    }),
    // fundamentals-timeseries: AAPL's captured answers by frequency (income, balance sheet, cash
    // flow: one capture each), of which the entries of the requested types are answered, as Yahoo
    // answers one entry per requested type; any other ticker gets the meta-only "no data" answer
    // (captured for BTC-USD).
    http.get(`${base}/ws/fundamentals-timeseries/v1/finance/timeseries/:ticker`, async ({ request, params }) => {
      const url = await capture(log, request);
      if (params.ticker !== 'AAPL') return HttpResponse.json(fixture('yahoo', 'financials-timeseries-btc-no-data'));
      const types = new Set(listParam(url, 'type'));
      const frequency = [...types][0]?.startsWith('quarterly') ? 'quarterly' : 'annual';
      const entries = TIMESERIES_CAPTURES.flatMap((what) =>
        fixture<TimeseriesBody>('yahoo', `financials-timeseries-aapl-${what}${frequency}`).timeseries.result);
      return HttpResponse.json({ timeseries: { result: entries.filter((e) => types.has(e.meta.type[0])), error: null } });
    }),
  ];
}
