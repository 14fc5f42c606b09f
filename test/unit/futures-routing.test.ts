// China futures route through the CN chain, and only to adapters whose capabilities list
// CN_FUTURES: the sim, Eastmoney (its futures markets) and TickFlow (pass-through) serve them;
// Yahoo is never asked.
import { describe, expect, it } from 'vitest';
import { createEastmoneyAdapter } from '../../adapters/eastmoney/index.ts';
import { SIM_CAPABILITIES } from '../../adapters/sim/index.ts';
import { createTickflowAdapter } from '../../adapters/tickflow/index.ts';
import { createYahooAdapter } from '../../adapters/yahoo/index.ts';
import type { Adapter, UpstreamHttp } from '../../adapters/types.ts';
import { AdapterRouter, serves } from '../../src/upstream/router.ts';

// Never called: no adapter is asked anything here.
const http = { request: async () => { throw new Error('no request expected'); } } as unknown as UpstreamHttp;
const deps = { now: () => 0, http };
const yahoo = createYahooAdapter({ baseUrl: 'http://yahoo.test' }, deps) as unknown as Adapter;
const tickflow = createTickflowAdapter({ baseUrl: 'http://tickflow.test', apiKey: 'k' }, deps) as unknown as Adapter;
const eastmoney = createEastmoneyAdapter({}, deps) as unknown as Adapter;
const sim = { id: 'sim', label: 'sim', capabilities: SIM_CAPABILITIES } as Adapter;

describe('CN_FUTURES routing', () => {
  it('capabilities: the sim, Eastmoney and TickFlow list CN_FUTURES, Yahoo does not', () => {
    expect(sim.capabilities.markets).toContain('CN_FUTURES');
    expect(tickflow.capabilities.markets).toContain('CN_FUTURES');
    expect(yahoo.capabilities.markets).not.toContain('CN_FUTURES');
    expect(eastmoney.capabilities.markets).toContain('CN_FUTURES');
    expect(serves(eastmoney, 'candles', 'CN_FUTURES', { period: '1m', rawPrices: true })).toBe(true);
    expect(serves(yahoo, 'quotes', 'CN_FUTURES')).toBe(false);
    expect(serves(yahoo, 'quotes', 'CN')).toBe(true);
    expect(serves(tickflow, 'candles', 'CN_FUTURES', { period: '1m' })).toBe(true);
  });

  it('a futures request takes the CN chain, skipping the adapters that do not serve futures', () => {
    const adapters = new Map<string, Adapter>([['yahoo', yahoo], ['eastmoney', eastmoney], ['tickflow', tickflow], ['sim', sim]]);
    const router = new AdapterRouter(adapters, {
      markets: { CN: ['yahoo', 'eastmoney', 'tickflow', 'sim'], HK: ['sim'], US: ['sim'] },
      overrides: { quotes: { CN: ['yahoo', 'sim'] } },
    }, new Map());
    expect(router.chain('candles', 'CN_FUTURES').map((a) => a.id)).toEqual(['eastmoney', 'tickflow', 'sim']);
    expect(router.chain('quotes', 'CN_FUTURES').map((a) => a.id)).toEqual(['sim']);
    expect(router.chain('candles', 'CN').map((a) => a.id)).toEqual(['yahoo', 'eastmoney', 'tickflow', 'sim']);
  });
});
