// msw handlers emulating a TickFlow-compatible vendor over the fixtures in mocks/fixtures/tickflow:
// batch routes answer only the symbols they know, single-symbol routes 404 SYMBOL_NOT_FOUND for
// the others, and /v1/klines applies start_time / end_time / count (newest bars) like the vendor.

import { http, HttpResponse, type HttpHandler } from 'msw';
import { capture, fixture, listParam, type CapturedRequest } from './support.ts';

export const TICKFLOW_TEST_BASE = 'https://tickflow.test';

type Columns = Record<string, number[]>;

const tf = <T = unknown>(name: string) => fixture<T>('tickflow', name);
const notFound = () => HttpResponse.json(tf('error-symbol-not-found'), { status: 404 });

function sliceColumns(cols: Columns, url: URL): Columns {
  const start = Number(url.searchParams.get('start_time') ?? -Infinity);
  const end = Number(url.searchParams.get('end_time') ?? Infinity);
  const count = Number(url.searchParams.get('count') ?? 100);
  const keep = cols.timestamp.map((t, i) => (t >= start && t <= end ? i : -1)).filter((i) => i >= 0).slice(-count);
  return Object.fromEntries(Object.entries(cols).map(([k, v]) => [k, keep.map((i) => v[i])]));
}

export function tickflowHandlers(log: CapturedRequest[] = [], base = TICKFLOW_TEST_BASE): HttpHandler[] {
  const quotes = async (request: Request) => {
    const url = await capture(log, request);
    const wanted = request.method === 'POST'
      ? ((await request.json()) as { symbols: string[] }).symbols
      : listParam(url, 'symbols');
    const { data } = tf<{ data: Array<{ symbol: string }> }>('quotes-ok');
    return HttpResponse.json({ data: data.filter((q) => wanted.includes(q.symbol)) });
  };
  const bySymbol = (name: string) => async ({ request }: { request: Request }) => {
    const url = await capture(log, request);
    const wanted = request.method === 'POST'
      ? ((await request.json()) as { symbols: string[] }).symbols
      : listParam(url, 'symbols');
    const { data } = tf<{ data: Record<string, unknown> | Array<{ symbol: string }> }>(name);
    if (Array.isArray(data)) return HttpResponse.json({ data: data.filter((d) => wanted.includes(d.symbol)) });
    return HttpResponse.json({ data: Object.fromEntries(Object.entries(data).filter(([k]) => wanted.includes(k))) });
  };

  return [
    http.get(`${base}/v1/quotes`, ({ request }) => quotes(request)),
    http.post(`${base}/v1/quotes`, ({ request }) => quotes(request)),
    http.get(`${base}/v1/depth/batch`, bySymbol('depth-ok')),
    http.get(`${base}/v1/klines/ex-factors`, bySymbol('ex-factors-ok')),
    http.get(`${base}/v1/financials/:statement`, async (info) => bySymbol(`financials-${String(info.params.statement)}-ok`)(info)),
    http.post(`${base}/v1/instruments`, bySymbol('instruments-ok')),
    http.get(`${base}/v1/klines/intraday`, async ({ request }) => {
      const url = await capture(log, request);
      return url.searchParams.get('symbol') === '600519.SH' ? HttpResponse.json(tf('intraday-ok')) : notFound();
    }),
    http.get(`${base}/v1/klines`, async ({ request }) => {
      const url = await capture(log, request);
      if (url.searchParams.get('symbol') !== '600519.SH') return notFound();
      const name = url.searchParams.get('period') === '1m' ? 'klines-minute-ok' : 'klines-daily-ok';
      return HttpResponse.json({ data: sliceColumns(tf<{ data: Columns }>(name).data, url) });
    }),
    http.get(`${base}/v1/universes/:id`, async ({ request, params }) => {
      await capture(log, request);
      if (params.id === 'CN_Equity_A') return HttpResponse.json(tf('universe-ok'));
      return HttpResponse.json({ code: 'NOT_FOUND', message: 'universe not found' }, { status: 404 });
    }),
  ];
}
