// GET /v1/universes, GET /v1/universes/{id} (aliases echoed), POST /v1/universes/batch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await app.close();
});

const headers = { 'x-api-key': KEYS.demo };
const SUMMARIES = [
  { id: 'CN_Stock', name: 'A股', region: 'CN', category: 'equity', symbol_count: 87 },
  { id: 'CN_ETF', name: '沪深ETF', region: 'CN', category: 'etf', symbol_count: 25 },
  { id: 'HK_Stock', name: '港股', region: 'HK', category: 'equity', symbol_count: 59 },
  { id: 'US_Stock', name: '美股', region: 'US', category: 'equity', symbol_count: 54 },
  { id: 'CN_Index', name: 'A股指数', region: 'CN', category: 'index', symbol_count: 9 },
  { id: 'HK_Index', name: '港股指数', region: 'HK', category: 'index', symbol_count: 3 },
  { id: 'US_Index', name: '美股指数', region: 'US', category: 'index', symbol_count: 3 },
];

async function detail(id: string) {
  const res = await app.inject({ url: `/v1/universes/${id}`, headers });
  expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
  return res.json().data as typeof SUMMARIES[number] & { symbols: string[] };
}

describe('GET /v1/universes', () => {
  it('lists the seven pools with their member counts', async () => {
    const res = await app.inject({ url: '/v1/universes', headers });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('sim');
    expect(res.json()).toEqual({ data: SUMMARIES });
  });

  it('is reference data any valid key may read', async () => {
    const res = await app.inject({ url: '/v1/universes', headers: { 'x-api-key': KEYS.cnDaily } });
    expect(res.statusCode).toBe(200);
  });
});

describe('GET /v1/universes/{id}', () => {
  it.each(SUMMARIES)('$id: summary plus its normalised, unique member symbols', async (summary) => {
    const d = await detail(summary.id);
    expect(Object.keys(d).sort()).toEqual(['category', 'id', 'name', 'region', 'symbol_count', 'symbols']);
    const { symbols, ...rest } = d;
    expect(rest).toEqual(summary);
    expect(symbols.length).toBe(summary.symbol_count);
    expect(new Set(symbols).size).toBe(symbols.length);
    for (const s of symbols) {
      expect(parseSymbol(s)?.symbol).toBe(s);
      expect(parseSymbol(s)?.region).toBe(summary.region);
    }
  });

  it.each([['CN_Equity_A', 'CN_Stock'], ['HK_Equity', 'HK_Stock'], ['US_Equity', 'US_Stock']])('the alias %s is echoed with the members of %s', async (alias, id) => {
    const viaAlias = await detail(alias);
    const canonical = await detail(id);
    expect(viaAlias.id).toBe(alias);
    expect({ ...viaAlias, id }).toEqual(canonical);
  });

  it('the pools hold 240 distinct instruments together (225 securities, 15 indices)', async () => {
    const all = (await Promise.all(SUMMARIES.map((s) => detail(s.id)))).flatMap((d) => d.symbols);
    expect(new Set(all).size).toBe(240);
  });
});

describe('POST /v1/universes/batch', () => {
  it('keys the details by the ids as asked; unknown ids are omitted', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/universes/batch', headers, payload: { ids: ['CN_ETF', 'NOPE', 'HK_Equity', 'cn_stock'] } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('sim');
    const data = res.json().data as Record<string, { id: string; symbols: string[] }>;
    expect(Object.keys(data)).toEqual(['CN_ETF', 'HK_Equity']);
    expect(data.CN_ETF).toEqual(await detail('CN_ETF'));
    expect(data.HK_Equity).toEqual(await detail('HK_Equity'));
  });

  it('only unknown ids: an empty map', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/universes/batch', headers, payload: { ids: ['NOPE'] } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: {} });
  });

  it('is POST only: a GET is 404 NOT_FOUND, never a redirect', async () => {
    const res = await app.inject({ url: '/v1/universes/batch', headers });
    // GET /v1/universes/batch matches /v1/universes/{id} with the unknown id "batch".
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toBe('NOT_FOUND');
  });
});
