// The official TickFlow client's financials requests (issue 25), replayed against the real app on
// the sim, exactly as tickflow-org/tickflow v0.1.21 sends them:
//
//   resources/financials.py  `_query` builds params in the order start_date, end_date, latest, each
//                            only when given (`latest` is a Python bool: httpx writes true/false);
//                            endpoints /v1/financials/{income,balance-sheet,cash-flow,metrics,shares}
//   _batch.py                chunks of MAX_FINANCIAL_SYMBOLS = 100, `{**params, "symbols": ",".join(chunk)}`
//                            (symbols last, the comma percent-encoded by httpx), up to 5 chunks in
//                            flight (sync: ThreadPoolExecutor(max_workers=5); async:
//                            asyncio.Semaphore(5)), each chunk's `data` dict merged with update();
//                            one failed chunk fails the call
//   _base_client.py          GET with Content-Type: application/json, Accept, User-Agent, x-api-key
//
// The sync and async clients send the same HTTP; so does as_dataframe (it flattens the merged dict
// client-side into rows with a `symbol` column). TickFlow.free() sends no key: financials are not
// in the free tier, so it gets a JSON 401 MISSING_API_KEY saying no key was sent (issue 43.2).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { STATEMENT_FIELDS, STATEMENT_ROUTES, STATEMENTS, type Statement } from '../../src/financials/types.ts';
import { buildTestApp } from '../helpers/app.ts';

const KEY = 'tickflow-sdk-key';
const SDK_HEADERS = { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'tickflow-python-sdk/0.1.21' };
const MAX_FINANCIAL_SYMBOLS = 100;
const MAX_WORKERS = 5;

function sdkKeys(): KeyStore {
  return new KeyStore(parseKeysFile({
    plans: {
      expert: {
        markets: ['CN', 'HK', 'US'],
        features: ['quotes', 'pools', 'klines_daily', 'ex_factors', 'instruments', 'batch', 'financials'],
        rate_limit: { max: 100000, window_ms: 60000 },
        max_symbols: 100,
      },
      free: { markets: ['CN', 'HK', 'US'], features: ['klines_daily', 'instruments', 'ex_factors', 'batch'], rate_limit: { max: 60, window_ms: 60000 }, max_symbols: 500 },
    },
    keys: [{ id: 'sdk', plan: 'expert', sha256: sha256Hex(KEY) }],
    anonymous: { plan: 'free' },
  }));
}

type Rec = Record<string, unknown> & { period_end: string };

let app: FastifyInstance;
let stocks: string[];
let etfs: string[];
beforeAll(async () => {
  // Every simulated stock's statements, cold: the sim builds each one's price history since listing
  // (~14 ms a symbol on a quiet machine, in-process CPU), so three concurrent chunks of 100 can
  // outlast the 5 s default deadline on a loaded CI machine. This test is about the client's
  // requests, not deadlines: it gives the sim room.
  ({ app } = await buildTestApp({ keys: sdkKeys(), configure: (c) => { c.upstream.deadlineMs = 30_000; } }));
  const res = await app.inject({
    method: 'POST', url: '/v1/universes/batch', headers: { ...SDK_HEADERS, 'x-api-key': KEY },
    payload: JSON.stringify({ ids: ['CN_Stock', 'HK_Stock', 'US_Stock', 'CN_ETF'] }),
  });
  const data = res.json().data as Record<string, { symbols: string[] }>;
  stocks = ['CN_Stock', 'HK_Stock', 'US_Stock'].flatMap((id) => data[id].symbols).filter((s) => /\.(SH|SZ|BJ|HK|US)$/.test(s)).slice(0, 240);
  etfs = data.CN_ETF.symbols.slice(0, 3);
}, 60_000);
afterAll(async () => {
  await app.close();
});

/** httpx's query string for the client's params dict, in insertion order. */
function query(params: Record<string, string | boolean>): string {
  return Object.entries(params).map(([k, v]) => `${k}=${encodeURIComponent(typeof v === 'boolean' ? (v ? 'true' : 'false') : v)}`).join('&');
}

interface Sent { url: string; status: number; missing?: string; body: { data?: Record<string, Rec[]>; code?: number; error?: string } }

/** `batched_get_sync` / `batched_get_async`: chunks of 100, five in flight, data dicts merged. */
async function clientCall(statement: Statement, symbols: string[], opts: { start_date?: string; end_date?: string; latest?: boolean }, key: string | null = KEY) {
  const params: Record<string, string | boolean> = {};
  if (opts.start_date !== undefined) params.start_date = opts.start_date;
  if (opts.end_date !== undefined) params.end_date = opts.end_date;
  if (opts.latest !== undefined) params.latest = opts.latest;
  const chunks: string[][] = [];
  for (let i = 0; i < symbols.length; i += MAX_FINANCIAL_SYMBOLS) chunks.push(symbols.slice(i, i + MAX_FINANCIAL_SYMBOLS));
  const sent: Sent[] = [];
  let inFlight = 0;
  let peak = 0;
  let next = 0;
  const merged: Record<string, Rec[]> = {};
  const worker = async () => {
    while (next < chunks.length) {
      const chunk = chunks[next++];
      const url = `/v1/financials/${STATEMENT_ROUTES[statement]}?${query({ ...params, symbols: chunk.join(',') })}`;
      inFlight++;
      peak = Math.max(peak, inFlight);
      const res = await app.inject({ method: 'GET', url, headers: key === null ? SDK_HEADERS : { ...SDK_HEADERS, 'x-api-key': key } });
      inFlight--;
      const body = res.json() as Sent['body'];
      sent.push({ url, status: res.statusCode, missing: res.headers['x-missing-symbols'] as string | undefined, body });
      if (res.statusCode === 200) Object.assign(merged, body.data);
    }
  };
  await Promise.all(Array.from({ length: Math.min(MAX_WORKERS, chunks.length) }, worker));
  return { merged, sent, peak, chunks };
}

describe('the official client\'s financials methods', () => {
  it.each(STATEMENTS)('financials.%s(240 stocks + ETFs): three chunks of 100, merged; ETFs named missing', async (statement) => {
    const symbols = [...stocks.slice(0, 120), ...etfs, ...stocks.slice(120)];
    const { merged, sent, peak, chunks } = await clientCall(statement, symbols, {});
    expect(chunks.map((c) => c.length)).toEqual([100, 100, symbols.length - 200]);
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(MAX_WORKERS);
    for (const s of sent) {
      expect(s.status, s.url.slice(0, 120)).toBe(200);
      expect(s.url).toMatch(new RegExp(`^/v1/financials/${STATEMENT_ROUTES[statement]}\\?symbols=[^&]+$`));
      expect(s.url).toContain('%2C');
    }
    // Every symbol is answered or named missing, never both; ETFs have no statements.
    const missing = sent.flatMap((s) => (s.missing ?? '').split(',').filter(Boolean));
    expect([...Object.keys(merged), ...missing].sort()).toEqual([...symbols].sort());
    for (const etf of etfs) expect(missing).toContain(etf);
    expect(Object.keys(merged).length).toBeGreaterThan(stocks.length * 0.9);
    const allowed = new Set(['period_end', 'announce_date', 'currency', 'period_months', ...STATEMENT_FIELDS[statement]]);
    for (const [symbol, records] of Object.entries(merged)) {
      expect(records.length, symbol).toBeGreaterThan(0);
      for (let i = 0; i < records.length; i++) {
        expect(records[i].period_end).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        if (i > 0) expect(records[i - 1].period_end <= records[i].period_end).toBe(true);
        for (const field of Object.keys(records[i])) expect(allowed.has(field), `${statement}.${field}`).toBe(true);
      }
    }
    // as_dataframe=True: one row per record with a `symbol` column (the client's long format).
    const rows = Object.entries(merged).flatMap(([symbol, records]) => records.map((r) => ({ symbol, ...r })));
    expect(rows.length).toBe(Object.values(merged).reduce((n, r) => n + r.length, 0));
  }, 60_000);

  it('start_date, end_date and latest are sent in the client\'s order and filter as documented', async () => {
    const symbols = stocks.slice(0, 150);
    const { merged, sent } = await clientCall('income', symbols, { start_date: '2023-01-01', end_date: '2024-12-31', latest: true });
    for (const s of sent) expect(s.url).toMatch(/^\/v1\/financials\/income\?start_date=2023-01-01&end_date=2024-12-31&latest=true&symbols=/);
    for (const [symbol, records] of Object.entries(merged)) {
      expect(records.length, symbol).toBeGreaterThan(0);
      expect(new Set(records.map((r) => r.period_end)).size, `${symbol}: one period_end`).toBe(1);
      expect(records[0].period_end >= '2023-01-01' && records[0].period_end <= '2024-12-31').toBe(true);
    }
    const everything = await clientCall('income', symbols, { start_date: '2023-01-01', end_date: '2024-12-31', latest: false });
    for (const s of everything.sent) expect(s.url).toContain('&latest=false&symbols=');
    for (const [symbol, records] of Object.entries(everything.merged)) {
      expect(records.length, symbol).toBeGreaterThanOrEqual(merged[symbol].length);
      expect(records.at(-1)).toEqual(merged[symbol].at(-1));
      for (const r of records) expect(r.period_end >= '2023-01-01' && r.period_end <= '2024-12-31').toBe(true);
    }
  }, 60_000);

  it('TickFlow.free() (no key): every financials method is a JSON 401 MISSING_API_KEY naming the feature', async () => {
    for (const statement of STATEMENTS) {
      const { sent } = await clientCall(statement, stocks.slice(0, 10), { latest: true }, null);
      expect(sent).toHaveLength(1);
      expect(sent[0].status).toBe(401);
      expect(sent[0].body.error).toBe('MISSING_API_KEY');
      expect((sent[0].body as { details?: { missing_features?: string[] } }).details?.missing_features).toEqual(['financials']);
    }
  });
});
