// GET /v1/financials/* on the real app over the sim (issue 25, items 1, 2 and 4): the five routes'
// shapes and order, each market's reporting spans, the selection parameters (inclusive dates,
// latest, as_of), the plan feature, the batch rules for unknown symbols, ETFs and failed vendors,
// and the cache: a symbol's whole series per statement is fetched once whatever the parameters.
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadDefaultConfig } from '../../config/load.ts';
import { createAdapters } from '../../src/upstream/registry.ts';
import type { Adapter, CallContext } from '../../adapters/types.ts';
import { AppError } from '../../src/errors.ts';
import { KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import type { SymbolRef } from '../../src/domain.ts';
import { STATEMENT_FIELDS, STATEMENT_ROUTES, STATEMENTS, type Statement } from '../../src/financials/types.ts';
import { buildTestApp, CN_MORNING } from '../helpers/app.ts';

const ALL = ['quotes', 'klines_daily', 'instruments', 'ex_factors', 'batch'];

function keys(): KeyStore {
  return new KeyStore(parseKeysFile({
    plans: {
      research: { markets: ['CN', 'HK', 'US'], features: [...ALL, 'financials'], rate_limit: { max: 100000, window_ms: 60000 }, max_symbols: 100 },
      prices: { markets: ['CN', 'HK', 'US'], features: ALL, rate_limit: { max: 100000, window_ms: 60000 }, max_symbols: 100 },
      cn_only: { markets: ['CN'], features: [...ALL, 'financials'], rate_limit: { max: 100000, window_ms: 60000 }, max_symbols: 2 },
    },
    keys: [
      { id: 'research', plan: 'research', sha256: sha256Hex('research-key') },
      { id: 'prices', plan: 'prices', sha256: sha256Hex('prices-key') },
      { id: 'cn-only', plan: 'cn_only', sha256: sha256Hex('cn-key') },
    ],
  }));
}

type Rec = Record<string, unknown> & { period_end: string; announce_date: string | null; period_months?: number | null };

/** The sim wrapped: counts getFinancials calls per statement and fails calls naming `failing`. */
function countingSim(now: () => number): { adapters: Map<string, Adapter>; calls: { statement: string; symbols: string[] }[]; failing: Set<string> } {
  const config = loadDefaultConfig();
  const adapters = createAdapters(config.routing, config.adapters, () => ({ now }));
  const sim = adapters.get('sim') as Adapter;
  const calls: { statement: string; symbols: string[] }[] = [];
  const failing = new Set<string>();
  const inner = sim.getFinancials!.bind(sim);
  const wrapped: Adapter = Object.assign(Object.create(Object.getPrototypeOf(sim) as object) as Adapter, sim, {
    async getFinancials<S extends Statement>(symbols: SymbolRef[], statement: S, ctx?: CallContext) {
      calls.push({ statement, symbols: symbols.map((s) => s.symbol) });
      if (symbols.some((s) => failing.has(s.symbol))) throw new AppError('UPSTREAM_ERROR', 'simulated vendor failure');
      return inner(symbols, statement, ctx);
    },
  });
  adapters.set('sim', wrapped);
  return { adapters, calls, failing };
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function get(url: string, key = 'research-key') {
  return app!.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
}

const ascending = (records: Rec[]) => records.every((r, i) => i === 0 || records[i - 1].period_end <= r.period_end);

describe('GET /v1/financials/*', () => {
  it('each of the five routes answers {data: {symbol: [record…]}} ascending, with the client\'s field names', async () => {
    ({ app } = await buildTestApp({ keys: keys() }));
    for (const statement of STATEMENTS) {
      const res = await get(`/v1/financials/${STATEMENT_ROUTES[statement]}?symbols=600519.SH,00700.HK,AAPL.US`);
      expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
      const data = res.json().data as Record<string, Rec[]>;
      expect(Object.keys(data)).toEqual(['600519.SH', '00700.HK', 'AAPL.US']);
      const allowed = new Set(['period_end', 'announce_date', 'currency', 'period_months', ...STATEMENT_FIELDS[statement]]);
      for (const [symbol, records] of Object.entries(data)) {
        expect(records.length, `${statement} ${symbol}`).toBeGreaterThan(0);
        expect(ascending(records), `${statement} ${symbol} ascending`).toBe(true);
        for (const r of records) {
          expect(r.period_end).toMatch(/^\d{4}-\d{2}-\d{2}$/);
          for (const field of Object.keys(r)) expect(allowed.has(field), `${statement}.${field}`).toBe(true);
          // Nothing announced after the clock's session date is served.
          if (r.announce_date !== null) expect(r.announce_date <= '2025-06-18').toBe(true);
        }
      }
    }
  });

  it('each market reports its own spans: A-shares year-to-date 3/6/9/12, HK 6/12, US quarters 3 and years 12', async () => {
    ({ app } = await buildTestApp({ keys: keys() }));
    const data = (await get('/v1/financials/income?symbols=600519.SH,00700.HK,AAPL.US&start_date=2023-01-01&end_date=2023-12-31')).json().data as Record<string, Rec[]>;
    const spans = (s: string) => data[s].map((r) => `${r.period_end}/${r.period_months}`);
    expect(spans('600519.SH')).toEqual(['2023-03-31/3', '2023-06-30/6', '2023-09-30/9', '2023-12-31/12']);
    expect(spans('00700.HK')).toEqual(['2023-06-30/6', '2023-12-31/12']);
    expect(spans('AAPL.US')).toEqual(['2023-03-31/3', '2023-06-30/3', '2023-09-30/3', '2023-12-31/12']);
    expect(data['600519.SH'][0].currency).toBe('CNY');
    expect(data['00700.HK'][0].currency).toBe('HKD');
    expect(data['AAPL.US'][0].currency).toBe('USD');
  });

  it('start_date and end_date are inclusive on period_end; latest keeps the newest period; as_of is point in time', async () => {
    ({ app } = await buildTestApp({ keys: keys() }));
    const all = (await get('/v1/financials/balance-sheet?symbols=600519.SH')).json().data['600519.SH'] as Rec[];
    const inner = (await get('/v1/financials/balance-sheet?symbols=600519.SH&start_date=2022-06-30&end_date=2023-06-30')).json().data['600519.SH'] as Rec[];
    expect(inner.map((r) => r.period_end)).toEqual(['2022-06-30', '2022-09-30', '2022-12-31', '2023-03-31', '2023-06-30']);
    expect(inner).toEqual(all.filter((r) => r.period_end >= '2022-06-30' && r.period_end <= '2023-06-30'));
    const latest = (await get('/v1/financials/balance-sheet?symbols=600519.SH&latest=true')).json().data['600519.SH'] as Rec[];
    expect(latest).toEqual([all[all.length - 1]]);
    expect((await get('/v1/financials/balance-sheet?symbols=600519.SH&latest=false')).json().data['600519.SH']).toEqual(all);
    // Q1 2025 was announced in April 2025: as of 2025-03-31 the newest record is the 2024 Q3 report
    // (the annual report came out after as_of too, if it did).
    const q1 = all.find((r) => r.period_end === '2025-03-31') as Rec;
    const before = (await get(`/v1/financials/balance-sheet?symbols=600519.SH&as_of=${dayBefore(q1.announce_date as string)}`)).json().data['600519.SH'] as Rec[];
    expect(before.map((r) => r.period_end)).not.toContain('2025-03-31');
    expect(before.every((r) => (r.announce_date as string) < (q1.announce_date as string))).toBe(true);
    const on = (await get(`/v1/financials/balance-sheet?symbols=600519.SH&as_of=${q1.announce_date}&latest=true`)).json().data['600519.SH'] as Rec[];
    expect(on).toEqual([q1]);
  });

  it('a known symbol with no record in the window maps to []', async () => {
    ({ app } = await buildTestApp({ keys: keys() }));
    const res = await get('/v1/financials/cash-flow?symbols=600519.SH&start_date=1990-01-01&end_date=1990-12-31');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { '600519.SH': [] } });
    expect(res.headers['x-missing-symbols']).toBeUndefined();
  });

  it('shares records carry the instrument\'s share counts', async () => {
    ({ app } = await buildTestApp({ keys: keys() }));
    const shares = (await get('/v1/financials/shares?symbols=600519.SH,AAPL.US&latest=true')).json().data as Record<string, Rec[]>;
    const instruments = (await get('/v1/instruments?symbols=600519.SH,AAPL.US')).json().data as { symbol: string; ext: { total_shares: number; float_shares: number } }[];
    for (const i of instruments) {
      expect(shares[i.symbol][0].total_shares).toBe(i.ext.total_shares);
      expect(shares[i.symbol][0].float_shares).toBe(i.ext.float_shares);
    }
  });

  it('a plan without `financials` gets 403 NO_FINANCIALS_PERMISSION; markets and the symbol cap apply', async () => {
    ({ app } = await buildTestApp({ keys: keys() }));
    for (const statement of STATEMENTS) {
      const res = await get(`/v1/financials/${STATEMENT_ROUTES[statement]}?symbols=600519.SH`, 'prices-key');
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toBe('NO_FINANCIALS_PERMISSION');
    }
    expect((await get('/v1/financials/income?symbols=AAPL.US', 'cn-key')).json().error).toBe('MARKET_NOT_PERMITTED');
    const tooMany = await get('/v1/financials/income?symbols=600519.SH,600000.SH,000001.SZ', 'cn-key');
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().error).toBe('TOO_MANY_SYMBOLS');
  });

  it('bad parameters are 400 JSON errors', async () => {
    ({ app } = await buildTestApp({ keys: keys() }));
    for (const query of ['start_date=2024-13-01', 'end_date=2024-02-30', 'as_of=20240101', 'latest=yes', 'latest=1']) {
      const res = await get(`/v1/financials/income?symbols=600519.SH&${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().code).toBe(400);
    }
    const reversed = await get('/v1/financials/income?symbols=600519.SH&start_date=2024-12-31&end_date=2024-01-01');
    expect(reversed.json().error).toBe('INVALID_TIME_RANGE');
    expect((await get('/v1/financials/income')).statusCode).toBe(400);
    expect((await get('/v1/financials/income?symbols=not-a-symbol')).json().error).toBe('INVALID_SYMBOL');
  });

  it('unknown symbols and ETFs (no statements) are left out and named in X-Missing-Symbols', async () => {
    ({ app } = await buildTestApp({ keys: keys() }));
    const res = await get('/v1/financials/income?symbols=999999.SH,600519.SH,510300.SH');
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json().data)).toEqual(['600519.SH']);
    expect(res.headers['x-missing-symbols']).toBe('999999.SH,510300.SH');
  });

  it('caches each symbol\'s whole series per statement: other dates, latest and as_of never refetch', async () => {
    const sim = countingSim(() => CN_MORNING);
    ({ app } = await buildTestApp({ keys: keys(), adapters: sim.adapters }));
    const queries = ['', '&latest=true', '&latest=false', '&start_date=2020-01-01', '&end_date=2021-12-31', '&as_of=2022-05-01', '&start_date=2019-01-01&end_date=2019-12-31&latest=true'];
    for (const q of queries) expect((await get(`/v1/financials/income?symbols=600519.SH,AAPL.US${q}`)).statusCode).toBe(200);
    expect(sim.calls.filter((c) => c.statement === 'income').flatMap((c) => c.symbols).sort()).toEqual(['600519.SH', 'AAPL.US']);
    // Another statement is its own cached unit; one symbol more is fetched alone.
    await get('/v1/financials/metrics?symbols=600519.SH,AAPL.US,00700.HK');
    await get('/v1/financials/income?symbols=600519.SH,AAPL.US,00700.HK&latest=true');
    expect(sim.calls.filter((c) => c.statement === 'income').flatMap((c) => c.symbols).sort()).toEqual(['00700.HK', '600519.SH', 'AAPL.US']);
    expect(sim.calls.filter((c) => c.statement === 'metrics').flatMap((c) => c.symbols).sort()).toEqual(['00700.HK', '600519.SH', 'AAPL.US']);
  });

  it('a refetch keeps a restated period\'s earlier version beside the new one: as_of still sees what was known then', async () => {
    let now = CN_MORNING;
    const sim = countingSim(() => now);
    // After the switch the vendor serves only the restatement of one period (new figures, a later
    // announcement date), as a vendor that keeps only its newest version does.
    let restate: { period_end: string; announce_date: string } | undefined;
    const inner = sim.adapters.get('sim')!.getFinancials!.bind(sim.adapters.get('sim'));
    sim.adapters.get('sim')!.getFinancials = async (symbols, statement, ctx) => {
      const out = await inner(symbols, statement, ctx);
      const series = out.get('600519.SH') as Rec[] | undefined;
      if (restate !== undefined && series !== undefined) {
        out.set('600519.SH', series.map((r) => (r.period_end === restate!.period_end && r.period_months === 12
          ? { ...r, announce_date: restate!.announce_date, revenue: 1234 }
          : r)) as never);
      }
      return out;
    };
    ({ app } = await buildTestApp({ keys: keys(), adapters: sim.adapters, now: () => now }));
    const first = (await get('/v1/financials/income?symbols=600519.SH')).json().data['600519.SH'] as Rec[];
    const year = first.filter((r) => r.period_months === 12).at(-1)!;
    expect(year.announce_date).not.toBeNull();
    restate = { period_end: year.period_end, announce_date: '2099-01-02' };
    // Past the one-day TTL and the stale-while-revalidate hour (inside stale-if-error): refetched.
    now += 26 * 3_600_000;
    const calls = sim.calls.length;
    const newest = (await get('/v1/financials/income?symbols=600519.SH')).json().data['600519.SH'] as Rec[];
    expect(sim.calls.length).toBe(calls + 1);
    const served = newest.filter((r) => r.period_end === year.period_end && r.period_months === 12);
    expect(served).toEqual([expect.objectContaining({ announce_date: '2099-01-02', revenue: 1234 })]);
    // Point in time before the restatement: the original figures, from the version the refetch kept.
    const asOf = (await get(`/v1/financials/income?symbols=600519.SH&as_of=${year.announce_date}`)).json().data['600519.SH'] as Rec[];
    expect(asOf.filter((r) => r.period_end === year.period_end && r.period_months === 12)).toEqual([year]);
    expect(sim.calls.length).toBe(calls + 1);
  });

  it('a symbol whose vendor failed is named in X-Failed-Symbols and is not cached; all failed is a 502', async () => {
    const sim = countingSim(() => CN_MORNING);
    ({ app } = await buildTestApp({ keys: keys(), adapters: sim.adapters }));
    sim.failing.add('AAPL.US');
    const partial = await get('/v1/financials/income?symbols=600519.SH,AAPL.US');
    expect(partial.statusCode).toBe(200);
    expect(Object.keys(partial.json().data)).toEqual(['600519.SH']);
    expect(partial.headers['x-failed-symbols']).toBe('AAPL.US');
    const allFailed = await get('/v1/financials/income?symbols=AAPL.US');
    expect(allFailed.statusCode).toBe(502);
    sim.failing.clear();
    const before = sim.calls.length;
    const healed = await get('/v1/financials/income?symbols=600519.SH,AAPL.US');
    expect(Object.keys(healed.json().data)).toEqual(['600519.SH', 'AAPL.US']);
    expect(healed.headers['x-failed-symbols']).toBeUndefined();
    // Only the failed symbol was fetched again: the failure was never cached, the success was.
    expect(sim.calls.slice(before).flatMap((c) => c.symbols)).toEqual(['AAPL.US']);
  });

  it('the OpenAPI document has the five routes, their parameters and the record schemas', async () => {
    ({ app } = await buildTestApp({ keys: keys() }));
    const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json() as {
      paths: Record<string, { get?: { parameters?: { name: string }[]; responses: Record<string, unknown> } }>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    for (const statement of STATEMENTS) {
      const op = doc.paths[`/v1/financials/${STATEMENT_ROUTES[statement]}`]?.get;
      expect(op, statement).toBeDefined();
      expect(op!.parameters!.map((p) => p.name).sort()).toEqual(['as_of', 'end_date', 'format', 'latest', 'start_date', 'symbols']);
      expect(op!.responses['403']).toBeDefined();
    }
    for (const [title, statement] of [['IncomeRecord', 'income'], ['BalanceSheetRecord', 'balance_sheet'], ['CashFlowRecord', 'cash_flow'], ['MetricsRecord', 'metrics'], ['SharesRecord', 'shares']] as const) {
      const schema = doc.components.schemas[title];
      expect(schema, title).toBeDefined();
      expect(Object.keys(schema.properties).sort()).toEqual(['announce_date', 'currency', 'period_end', 'period_months', ...STATEMENT_FIELDS[statement]].sort());
    }
  });
});

function dayBefore(date: string): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
}
