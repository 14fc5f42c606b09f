// The contract suite itself (issue 8.8): it must FAIL for an adapter that declares nothing, for
// one that leaves a resource undeclared instead of `false`, and for a declared resource that
// answers invalid shapes; and it passes for the sim (which had no contract run before).
import { describe, expect, it } from 'vitest';
import type { Adapter, AdapterCapabilities } from '../../adapters/types.ts';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { Quote } from '../../src/domain.ts';
import { contractCases, runAdapterContract } from './contract.ts';
import { AFTER_CLOSE, ref } from './sim-fixtures.ts';

const MT = ref('600519.SH');
const NOTHING: AdapterCapabilities = {
  resources: {
    quotes: false, depth: false, candles: false, intraday: false, exFactors: false, instruments: false, pools: false,
    financialsIncome: false, financialsBalanceSheet: false, financialsCashFlow: false, financialsMetrics: false, financialsShares: false,
  },
  markets: ['CN'],
  periods: { '1m': false, '1d': false },
  maxBatch: 1,
  rawPrices: false,
  amount: false,
};

/** An adapter whose every method records that it was called and answers nothing. */
function stub(capabilities: AdapterCapabilities, quotes: Quote[] = []): Adapter & { called: string[] } {
  const called: string[] = [];
  const note = (name: string) => async () => {
    called.push(name);
    return undefined as never;
  };
  return {
    id: 'stub', label: 'stub', capabilities, called,
    getQuotes: async () => {
      called.push('getQuotes');
      return new Map(quotes.map((q) => [q.symbol, q]));
    },
    getDepth: note('getDepth'), getCandles: note('getCandles'), getIntraday: note('getIntraday'),
    getExFactors: note('getExFactors'), getInstruments: note('getInstruments'), listPool: note('listPool'),
  };
}

/** Runs every case; the names of those that failed. */
async function failing(make: () => Adapter): Promise<string[]> {
  const out: string[] = [];
  for (const c of contractCases(make, [MT])) {
    try {
      await c.run();
    } catch {
      out.push(c.name);
    }
  }
  return out;
}

describe('the adapter contract suite', () => {
  it('fails for an adapter that declares nothing, and never calls its methods', async () => {
    const adapter = stub(NOTHING);
    expect(await failing(() => adapter)).toEqual(['declares its capabilities as data']);
    await expect(contractCases(() => adapter, [MT])[0].run()).rejects.toThrow(/declares at least quotes or candles/);
    expect(adapter.called).toEqual([]);
  });

  it('fails for a resource left undeclared (missing is not `false`), in the capability case and in that resource\'s case', async () => {
    const { depth: _missing, ...rest } = { ...NOTHING.resources, quotes: true };
    const adapter = stub({ ...NOTHING, resources: rest as AdapterCapabilities['resources'] });
    const failed = await failing(() => adapter);
    expect(failed).toContain('declares its capabilities as data');
    expect(failed).toContain('depth');
  });

  it('fails for a declared resource that answers nothing or answers invalid shapes', async () => {
    const caps = { ...NOTHING, resources: { ...NOTHING.resources, quotes: true } };
    expect(await failing(() => stub(caps))).toEqual(['quotes']);
    const bad: Quote = {
      symbol: MT.symbol, region: 'CN', last_price: -10.5, open: 10, high: 11, low: 9, prev_close: 10, volume: 100, amount: 1000,
      timestamp: AFTER_CLOSE, ext: { type: 'cn_equity', name: 'x', amplitude: 0.2, change_amount: -20.5, change_pct: -2.05, turnover_rate: null },
    };
    expect(await failing(() => stub(caps, [bad]))).toEqual(['quotes']);
  });

  it('fails for resourceMarkets naming an undeclared resource or market', async () => {
    const caps: AdapterCapabilities = {
      ...NOTHING, resources: { ...NOTHING.resources, quotes: true }, resourceMarkets: { exFactors: ['CN'], quotes: ['US'] },
    };
    await expect(contractCases(() => stub(caps), [MT])[0].run()).rejects.toThrow(/resourceMarkets/);
  });
});

runAdapterContract('sim', () => createSimAdapter({}, { now: () => AFTER_CLOSE }), {
  batch: [MT, ref('00700.HK'), ref('AAPL.US')],
  candles: [MT, ref('00700.HK')],
  unknown: ref('999999.SH'),
});
