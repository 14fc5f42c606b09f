// msw handlers emulating Eastmoney over the fixtures in mocks/fixtures/eastmoney: ulist answers the
// secids it knows, stock/get and kline/get answer `data: null` for the others, kline/get applies
// beg / end / lmt (newest rows), and the datacenter answers 9201 for codes without dividends.

import { http, HttpResponse, type HttpHandler } from 'msw';
import { capture, fixture, listParam, type CapturedRequest } from './support.ts';

export const EASTMONEY_TEST_HOSTS = {
  quote: ['https://push2.em.test', 'https://82.push2.em.test'],
  history: ['https://push2his.em.test', 'https://82.push2his.em.test'],
  datacenter: ['https://datacenter.em.test'],
  f10: ['https://f10.em.test'],
};

type Envelope = { data: Record<string, unknown> | null } & Record<string, unknown>;
const em = <T = Envelope>(name: string) => fixture<T>('eastmoney', name);

const DEPTH: Record<string, string> = { '1.600519': 'stock-depth-600519', '116.00700': 'stock-depth-00700' };
const INSTRUMENT: Record<string, string> = { '1.600519': 'stock-instrument-600519', '116.00700': 'stock-instrument-00700' };
const TRENDS: Record<string, string> = { '1.600519': 'trends-600519', '105.AAPL': 'trends-aapl' };
const KLINES: Record<string, string> = { '1.600519/101': 'kline-daily-600519', '1.600519/1': 'kline-minute-600519', '0.000001/101': 'kline-daily-000001' };
const DIVIDENDS: Record<string, string> = { '000001': 'dividends-000001' };
/** RPT_IPO_ALLOTMENT (配股) answers by code; others answer 9201 (no rows). */
const RIGHTS: Record<string, string> = { '601398': 'rights-601398' };
/** RPT_HKF10_MAIN_DIVBASIC answers by code. */
const HK_DIVIDENDS: Record<string, string> = { '00883': 'hk-divbasic-00883' };
/**
 * F10 statements by report name and SECUCODE filter; other codes answer the captured 9201 (no
 * data). The A-share statement tables are asked through `data/get` (`type=`), the HK indicator and
 * share-capital tables through `data/v1/get` (`reportName=`).
 */
const F10_FINANCIALS: Record<string, Record<string, string>> = {
  RPT_HKF10_FN_MAININDICATOR: { '02367.HK': 'financials-hk-indicators-02367' },
  RPT_F10_FINANCE_GINCOME: { '601088.SH': 'financials-cn-income-601088' },
  RPT_F10_FINANCE_GBALANCE: { '601088.SH': 'financials-cn-balance-601088' },
  RPT_F10_FINANCE_GCASHFLOW: { '601088.SH': 'financials-cn-cashflow-601088' },
  RPT_F10_EH_EQUITY: { '601088.SH': 'financials-cn-shares-601088' },
};

function f10Financials(report: string | null, url: URL): Envelope | undefined {
  const table = F10_FINANCIALS[report ?? ''];
  if (table === undefined) return undefined;
  const secucode = /^\(SECUCODE="([^"]+)"\)$/.exec(url.searchParams.get('filter') ?? '')?.[1] ?? '';
  return em(table[secucode] ?? 'financials-no-data-9201');
}

function ulist(url: URL): Envelope {
  const wanted = new Set(listParam(url, 'secids'));
  const body = em(url.searchParams.get('fields') === 'f12,f13' ? 'ulist-markets-ok' : 'ulist-quotes-ok');
  const data = body.data as { diff: Array<{ f12: string; f13: number }> };
  const diff = data.diff.filter((row) => wanted.has(`${row.f13}.${row.f12}`));
  return { ...body, data: diff.length === 0 ? null : { total: diff.length, diff } };
}

function klines(url: URL): Envelope {
  const name = KLINES[`${url.searchParams.get('secid')}/${url.searchParams.get('klt')}`];
  if (name === undefined) return em('stock-empty');
  const body = em(name);
  const data = body.data as { klines: string[] };
  const beg = url.searchParams.get('beg') ?? '0';
  const end = url.searchParams.get('end') ?? '20500101';
  const lmt = Number(url.searchParams.get('lmt') ?? 1_000_000);
  const day = (row: string) => row.slice(0, 10).replaceAll('-', '');
  const rows = data.klines.filter((row) => (beg === '0' || day(row) >= beg) && day(row) <= end).slice(-lmt);
  return { ...body, data: { ...data, klines: rows } };
}

export function eastmoneyHandlers(log: CapturedRequest[] = [], hosts: typeof EASTMONEY_TEST_HOSTS | Omit<typeof EASTMONEY_TEST_HOSTS, 'f10'> & { f10?: string[] } = EASTMONEY_TEST_HOSTS): HttpHandler[] {
  const bySecid = (table: Record<string, string>, url: URL) => {
    const name = table[url.searchParams.get('secid') ?? ''];
    return HttpResponse.json(em(name ?? 'stock-empty'));
  };
  return [
    ...hosts.quote.flatMap((h) => [
      http.get(`${h}/api/qt/ulist.np/get`, async ({ request }) => HttpResponse.json(ulist(await capture(log, request)))),
      http.get(`${h}/api/qt/stock/get`, async ({ request }) => {
        const url = await capture(log, request);
        return bySecid((url.searchParams.get('fields') ?? '').includes('f31') ? DEPTH : INSTRUMENT, url);
      }),
      http.get(`${h}/api/qt/stock/trends2/get`, async ({ request }) => bySecid(TRENDS, await capture(log, request))),
    ]),
    ...hosts.history.map((h) =>
      http.get(`${h}/api/qt/stock/kline/get`, async ({ request }) => HttpResponse.json(klines(await capture(log, request))))),
    ...hosts.datacenter.map((h) =>
      http.get(`${h}/api/data/v1/get`, async ({ request }) => {
        const url = await capture(log, request);
        const code = /SECURITY_CODE="(\d+)"/.exec(url.searchParams.get('filter') ?? '')?.[1] ?? '';
        const table = url.searchParams.get('reportName') === 'RPT_IPO_ALLOTMENT' ? RIGHTS : DIVIDENDS;
        return HttpResponse.json(em(table[code] ?? 'dividends-empty'));
      })),
    ...(hosts.f10 ?? []).flatMap((h) => [
      http.get(`${h}/securities/api/data/v1/get`, async ({ request }) => {
        const url = await capture(log, request);
        const financials = f10Financials(url.searchParams.get('reportName'), url);
        if (financials !== undefined) return HttpResponse.json(financials);
        const code = /SECURITY_CODE="(\d+)"/.exec(url.searchParams.get('filter') ?? '')?.[1] ?? '';
        return HttpResponse.json(em(HK_DIVIDENDS[code] ?? 'dividends-empty'));
      }),
      http.get(`${h}/securities/api/data/get`, async ({ request }) => {
        const url = await capture(log, request);
        return HttpResponse.json(f10Financials(url.searchParams.get('type'), url) ?? em('dividends-bad-report'));
      }),
    ]),
  ];
}
