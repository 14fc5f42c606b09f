// The call's deadline reaches the HTTP layer in the request: every vendor adapter passes its
// CallContext's signal and deadlineAt on with each request of every method it serves (the HTTP
// layer sizes its budget waits by deadlineAt; there is no other way for it to learn the deadline).
import { describe, expect, it } from 'vitest';
import type { Adapter, CallContext, Resource, UpstreamHttp, UpstreamRequest } from '../../adapters/types.ts';
import { createEastmoneyAdapter } from '../../adapters/eastmoney/index.ts';
import { createTickflowAdapter } from '../../adapters/tickflow/index.ts';
import { createYahooAdapter } from '../../adapters/yahoo/index.ts';
import type { PoolId, Region } from '../../src/domain.ts';
import { AppError } from '../../src/errors.ts';
import { cnTime, ref } from './helpers.ts';

const NOW = cnTime('2026-05-08', '10:30');

/** An HTTP layer that records each request and fails it (the answer does not matter here). */
function recordingHttp(): { http: UpstreamHttp; requests: UpstreamRequest[] } {
  const requests: UpstreamRequest[] = [];
  const http: UpstreamHttp = {
    async request(req) {
      requests.push(req);
      throw new AppError('UPSTREAM_ERROR', 'recorded', { details: { adapter: 'test' } });
    },
  };
  return { http, requests };
}

const vendors: Array<[string, (http: UpstreamHttp) => Adapter]> = [
  ['tickflow', (http) => createTickflowAdapter({ baseUrl: 'http://tickflow.test', apiKey: 'test-key' }, { now: () => NOW, http })],
  ['eastmoney', (http) => createEastmoneyAdapter({}, { now: () => NOW, http })],
  ['yahoo', (http) => createYahooAdapter({ baseUrl: 'http://yahoo.test' }, { now: () => NOW, http })],
];

const SYMBOLS: Record<Region, string> = { CN: '600519.SH', HK: '00700.HK', US: 'AAPL.US' };
const POOLS: Record<Region, PoolId> = { CN: 'CN_Stock', HK: 'HK_Stock', US: 'US_Stock' };

/** One call of each method `adapter` has, with `ctx`, for a market it serves that resource in. */
function callsOf(adapter: Adapter, ctx: CallContext): Array<[string, () => Promise<unknown>]> {
  const region = (resource: Resource): Region => (adapter.capabilities.resourceMarkets?.[resource]?.[0] ?? adapter.capabilities.markets[0]) as Region;
  const at = (resource: Resource) => ref(SYMBOLS[region(resource)]);
  const calls: Array<[string, (() => Promise<unknown>) | undefined]> = [
    ['getQuotes', adapter.getQuotes && (() => adapter.getQuotes!([at('quotes')], ctx))],
    ['getDepth', adapter.getDepth && (() => adapter.getDepth!([at('depth')], ctx))],
    ['getCandles', adapter.getCandles && (() => adapter.getCandles!({ symbol: at('candles'), period: '1d', count: 10 }, ctx))],
    ['getIntraday', adapter.getIntraday && (() => adapter.getIntraday!(at('intraday'), ctx))],
    ['getExFactors', adapter.getExFactors && (() => adapter.getExFactors!([at('exFactors')], ctx))],
    ['getInstruments', adapter.getInstruments && (() => adapter.getInstruments!([at('instruments')], ctx))],
    ['getFinancials', adapter.getFinancials && (() => adapter.getFinancials!([at('financialsIncome')], 'income', ctx))],
    ['listPool', adapter.listPool && (() => adapter.listPool!(POOLS[region('pools')], ctx))],
  ];
  return calls.filter((c): c is [string, () => Promise<unknown>] => c[1] !== undefined);
}

describe.each(vendors)('the %s adapter', (_name, create) => {
  it('passes the call context\'s signal and deadlineAt on with every request', async () => {
    const { http, requests } = recordingHttp();
    const adapter = create(http);
    const ctx: CallContext = { signal: new AbortController().signal, deadlineAt: NOW + 4_321 };
    const calls = callsOf(adapter, ctx);
    expect(calls.length).toBeGreaterThan(3);
    for (const [method, run] of calls) {
      const before = requests.length;
      await run().catch(() => undefined);
      expect(requests.length, `${method} sent a request`).toBeGreaterThan(before);
      for (const req of requests.slice(before)) {
        expect(req.signal, `${method}: signal`).toBe(ctx.signal);
        expect(req.deadlineAt, `${method}: deadlineAt`).toBe(ctx.deadlineAt);
      }
    }
  });
});
