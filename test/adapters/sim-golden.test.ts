// Golden outputs of the sim: the model is deterministic, so every number it serves for a given
// (symbol, now, query) is pinned here by a hash of its JSON (JSON round-trips doubles exactly).
// Rewrites of the generator for speed must keep every hash; a change of the model itself must
// update them on purpose. SIM_GOLDEN_WRITE=<file> writes the current table there as JSON.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { createSimMarket } from '../../adapters/sim/market.ts';
import type { Adapter } from '../../adapters/types.ts';
import { ref } from './sim-fixtures.ts';

const SYMBOLS = [
  '600519.SH', '688256.SH', '510300.SH', '511880.SH', '000656.SZ', '300750.SZ', '001289.SZ', '832982.BJ',
  '00700.HK', '02800.HK', '00857.HK', 'AAPL.US', 'PFE.US', 'SIM0001.US', 'SIM0137.US', 'SIM0400.US',
];

/** Instants around sessions of all three markets, before and after the anchor date. */
const TIMES: Record<string, number> = {
  cnMorning: Date.parse('2025-06-18T02:15:30Z'),
  hkLunch: Date.parse('2025-06-18T04:30:10Z'),
  cnAfterClose: Date.parse('2025-06-18T08:00:00Z'),
  usMidday: Date.parse('2025-06-18T16:42:17Z'),
  saturday: Date.parse('2025-06-21T04:00:00Z'),
  early: Date.parse('2008-03-05T03:00:00Z'),
  afterAnchor: Date.parse('2026-12-15T14:45:00Z'),
};

const UNIVERSE = 400;
const DAY = 86_400_000;

function digest(value: unknown): string {
  const json = JSON.stringify(value, (_key, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as unknown as ArrayLike<number>) : v));
  return createHash('sha256').update(json).digest('hex').slice(0, 16);
}

async function adapterCases(adapter: Adapter, symbol: string, now: number): Promise<Record<string, string>> {
  const s = ref(symbol);
  const out: Record<string, string> = {};
  const candles = async (name: string, q: { period: '1m' | '1d'; start?: number; end?: number; count?: number }) => {
    out[name] = digest(await adapter.getCandles({ symbol: s, ...q }));
  };
  await candles('1d all', { period: '1d' });
  await candles('1d 1000', { period: '1d', count: 1000 });
  await candles('1d range', { period: '1d', start: now - 400 * DAY, end: now - 30 * DAY });
  await candles('1d range 50', { period: '1d', start: now - 400 * DAY, end: now - 30 * DAY, count: 50 });
  await candles('1m 1000', { period: '1m', count: 1000 });
  await candles('1m 6000', { period: '1m', count: 6000 });
  await candles('1m range', { period: '1m', start: now - 3 * DAY, end: now - DAY });
  await candles('1m range 300', { period: '1m', start: now - 5 * DAY, end: now, count: 300 });
  await candles('1m open', { period: '1m', start: now - 2 * DAY });
  out.intraday = digest(await adapter.getIntraday!(s));
  out.quote = digest([...(await adapter.getQuotes([s])).entries()]);
  out.depth = digest([...(await adapter.getDepth!([s])).entries()]);
  out.exFactors = digest([...(await adapter.getExFactors!([s])).entries()]);
  out.instrument = digest([...(await adapter.getInstruments!([s])).entries()]);
  return out;
}

async function collect(): Promise<Record<string, string>> {
  const table: Record<string, string> = {};
  // Fresh adapters: cold memos for every (time, symbol).
  for (const [time, now] of Object.entries(TIMES)) {
    const adapter = createSimAdapter({ syntheticUniverse: UNIVERSE }, { now: () => now });
    for (const symbol of SYMBOLS) {
      const cases = await adapterCases(adapter, symbol, now);
      table[`${time} ${symbol}`] = digest(cases);
    }
  }
  // One adapter whose clock moves forward: memoised histories and tails extend in place.
  let clock = TIMES.early;
  const moving = createSimAdapter({ syntheticUniverse: UNIVERSE }, { now: () => clock });
  for (const time of ['early', 'cnMorning', 'hkLunch', 'cnAfterClose', 'usMidday', 'saturday', 'afterAnchor']) {
    clock = TIMES[time];
    const row: Record<string, Record<string, string>> = {};
    for (const symbol of SYMBOLS) row[symbol] = await adapterCases(moving, symbol, clock);
    table[`moving ${time}`] = digest(row);
  }
  // The market's own structures: full histories (with ex-events and plan), tails, session days.
  const market = createSimMarket({ syntheticUniverse: UNIVERSE });
  for (const symbol of SYMBOLS) {
    const inst = market.instrument(symbol)!;
    for (const time of ['cnAfterClose', 'afterAnchor']) {
      const now = TIMES[time];
      const { walk: _walk, ...history } = market.history(inst, now);
      const { walk: _tailWalk, ...tail } = market.recent(inst, now);
      const day = market.sessionDay(inst, now);
      const session = day === undefined ? undefined : { ...day, history: undefined, minutes: day.minutes() };
      table[`market ${time} ${symbol}`] = digest({ history, tail, session });
    }
  }
  return table;
}

const EXPECTED: Record<string, string> = {
  'afterAnchor 000656.SZ': '6551b4ef4a8498e4',
  'afterAnchor 001289.SZ': '04ef12268c75d0b7',
  'afterAnchor 00700.HK': 'e3aac7358781027f',
  'afterAnchor 00857.HK': '469816459c7d2528',
  'afterAnchor 02800.HK': '2bfc775ca7437e92',
  'afterAnchor 300750.SZ': '041ee5f36a674e69',
  'afterAnchor 510300.SH': '00b1e1144c1cc9a6',
  'afterAnchor 511880.SH': '597b3d82107683fd',
  'afterAnchor 600519.SH': '4a36ae9d2b067785',
  'afterAnchor 688256.SH': '652eb2e38624f2e3',
  'afterAnchor 832982.BJ': '3f129c7a202e4ab0',
  'afterAnchor AAPL.US': 'cf8af62fb629eacd',
  'afterAnchor PFE.US': 'b6db0d1fecd6c67a',
  'afterAnchor SIM0001.US': '93d2f28f6f5646ad',
  'afterAnchor SIM0137.US': '3fceb9d0a1641435',
  'afterAnchor SIM0400.US': '9d10a464c6de2319',
  'cnAfterClose 000656.SZ': '8b6c59e8beef1f6e',
  'cnAfterClose 001289.SZ': '56001ea382950310',
  'cnAfterClose 00700.HK': '839424cd44768a1a',
  'cnAfterClose 00857.HK': 'a6144dbc52d324a6',
  'cnAfterClose 02800.HK': '0857deb8d0fe9313',
  'cnAfterClose 300750.SZ': '158543a967f33807',
  'cnAfterClose 510300.SH': 'd7be726410d49c8f',
  'cnAfterClose 511880.SH': '6ee69fa476e98c6d',
  'cnAfterClose 600519.SH': 'd8e9089c3285f3a2',
  'cnAfterClose 688256.SH': '97010077f2cd554e',
  'cnAfterClose 832982.BJ': '421ce0c521f338e2',
  'cnAfterClose AAPL.US': '1e4b7e532934b298',
  'cnAfterClose PFE.US': 'df53a6b182095577',
  'cnAfterClose SIM0001.US': 'a0468c15203d3b1f',
  'cnAfterClose SIM0137.US': '8901211e6bf1c700',
  'cnAfterClose SIM0400.US': '186c50d319514fba',
  'cnMorning 000656.SZ': '4c433e12e556ef54',
  'cnMorning 001289.SZ': '8cdaa5c1a30bc968',
  'cnMorning 00700.HK': '55936eb89608eb5a',
  'cnMorning 00857.HK': '6ff75e9314f34483',
  'cnMorning 02800.HK': '27a2fc59967f6e89',
  'cnMorning 300750.SZ': '9d425fe8ce3de459',
  'cnMorning 510300.SH': '7555f903b1d98523',
  'cnMorning 511880.SH': '706106dd394e58fe',
  'cnMorning 600519.SH': '81897ab78636cfe2',
  'cnMorning 688256.SH': '767d92ca283b84b2',
  'cnMorning 832982.BJ': 'f241280926f61a4b',
  'cnMorning AAPL.US': '86d8f3dc05903785',
  'cnMorning PFE.US': 'd194dc7d51e3a689',
  'cnMorning SIM0001.US': '72745bbc6444c953',
  'cnMorning SIM0137.US': '0fe85bc45326df0b',
  'cnMorning SIM0400.US': '996af0a9deea93ce',
  'early 000656.SZ': 'f5510bbf9950c2ff',
  'early 001289.SZ': '1e607444bc52e4e3',
  'early 00700.HK': '680bff084453c141',
  'early 00857.HK': '5dfc74f32340ced4',
  'early 02800.HK': 'd84e0ee7dd987227',
  'early 300750.SZ': '281d99edcb6c2be0',
  'early 510300.SH': '99d9f29eae33d471',
  'early 511880.SH': '28acdacf1fd723a5',
  'early 600519.SH': '7b656583ba8461d9',
  'early 688256.SH': 'e480fc9c6ce3a013',
  'early 832982.BJ': '37dd714063f51824',
  'early AAPL.US': 'eb671bf2ceac3df8',
  'early PFE.US': '94466ece290fb2a2',
  'early SIM0001.US': '6796db8b0d0505e6',
  'early SIM0137.US': '4763648e1553a007',
  'early SIM0400.US': '3152e2ddd3cf3669',
  'hkLunch 000656.SZ': '3223b2b48f5f729a',
  'hkLunch 001289.SZ': '037cf06f9c57f7cf',
  'hkLunch 00700.HK': '56cdee6cba6003d9',
  'hkLunch 00857.HK': 'b14a5c4a28d0c380',
  'hkLunch 02800.HK': 'a071a556a6b26975',
  'hkLunch 300750.SZ': '3a2a58a51d6fb71a',
  'hkLunch 510300.SH': 'fedf739fe57bc907',
  'hkLunch 511880.SH': '80754111e739cbcc',
  'hkLunch 600519.SH': '5552f3dd9773473b',
  'hkLunch 688256.SH': 'eca4c874797c87f0',
  'hkLunch 832982.BJ': '80a621eb08341f36',
  'hkLunch AAPL.US': '644380a3011c4e57',
  'hkLunch PFE.US': 'd51dceb04c222f18',
  'hkLunch SIM0001.US': '8439657774ed2556',
  'hkLunch SIM0137.US': 'e444997a8dafad80',
  'hkLunch SIM0400.US': '6ddfbaab19f3d62b',
  'market afterAnchor 000656.SZ': '105914089cedd144',
  'market afterAnchor 001289.SZ': '44fac25590795041',
  'market afterAnchor 00700.HK': '0bfd4ce6c53081c0',
  'market afterAnchor 00857.HK': 'e94a07f57b74e365',
  'market afterAnchor 02800.HK': 'dc4d76a26eb3d57b',
  'market afterAnchor 300750.SZ': '7793c4b2268e869d',
  'market afterAnchor 510300.SH': '32f2a880de574482',
  'market afterAnchor 511880.SH': 'eb3494926a6ad9b7',
  'market afterAnchor 600519.SH': 'd33f6bc0d1326efa',
  'market afterAnchor 688256.SH': '881e0c2df95d042d',
  'market afterAnchor 832982.BJ': '81d24144e94f6a75',
  'market afterAnchor AAPL.US': '901366b023cf78f3',
  'market afterAnchor PFE.US': '857cb9180e9ba58d',
  'market afterAnchor SIM0001.US': '9bc741f2be83afda',
  'market afterAnchor SIM0137.US': '72337c1bd9212ab7',
  'market afterAnchor SIM0400.US': '7c2144af55abd25e',
  'market cnAfterClose 000656.SZ': '73fa1d48a3ef828f',
  'market cnAfterClose 001289.SZ': '16d40d6ae4742c2c',
  'market cnAfterClose 00700.HK': '6a65d1c7eb95ab3a',
  'market cnAfterClose 00857.HK': '9e226f50d740e03a',
  'market cnAfterClose 02800.HK': '08c4ed02fedd5c23',
  'market cnAfterClose 300750.SZ': 'da77198bbe944258',
  'market cnAfterClose 510300.SH': '22c5ad7475a17da2',
  'market cnAfterClose 511880.SH': '7e7ca728eb902cee',
  'market cnAfterClose 600519.SH': 'bc350ff469b74548',
  'market cnAfterClose 688256.SH': 'fd33fc2c4403fe20',
  'market cnAfterClose 832982.BJ': '90c5c7833289d12b',
  'market cnAfterClose AAPL.US': '00930f59ae156695',
  'market cnAfterClose PFE.US': 'a35f5153c1b4d52d',
  'market cnAfterClose SIM0001.US': '40d530ae52edf7d8',
  'market cnAfterClose SIM0137.US': '3099b1f49f34b2e4',
  'market cnAfterClose SIM0400.US': '45cbf9115fbf5a74',
  'moving afterAnchor': 'e4fa571910830920',
  'moving cnAfterClose': '9a04ad515b196523',
  'moving cnMorning': '105ee9ca2e5f582d',
  'moving early': '542d737d25c87313',
  'moving hkLunch': '5fd44d79b56f5daa',
  'moving saturday': 'e3f03e4dd4830f3b',
  'moving usMidday': 'b31b8b18d5cc1d28',
  'saturday 000656.SZ': 'c3cbf32c69330cad',
  'saturday 001289.SZ': '24eb71dcfcf2f04b',
  'saturday 00700.HK': '8f51e3dd54f67d87',
  'saturday 00857.HK': '6a59d64184e44025',
  'saturday 02800.HK': '0317e8dbcfd364e0',
  'saturday 300750.SZ': '5abddee8ebc8d90b',
  'saturday 510300.SH': 'e4316e6a2d8955cc',
  'saturday 511880.SH': '2f1ad848e5d888a8',
  'saturday 600519.SH': 'af833f29e89bd1a8',
  'saturday 688256.SH': '38669d4cfe39bfd3',
  'saturday 832982.BJ': 'fce3417fb3ae14e7',
  'saturday AAPL.US': 'a44a3f0ff9fad6e6',
  'saturday PFE.US': 'e0a18f7e77ff347d',
  'saturday SIM0001.US': '4818d8677f535dc1',
  'saturday SIM0137.US': 'ddea2c08a9e4b425',
  'saturday SIM0400.US': '0a5917a8fc050655',
  'usMidday 000656.SZ': 'a239850c0da908cf',
  'usMidday 001289.SZ': '17119b9e87b2b8de',
  'usMidday 00700.HK': 'c28f23e0b872eaf8',
  'usMidday 00857.HK': 'eb7d0a2396404b1c',
  'usMidday 02800.HK': 'd7be21b0b479bece',
  'usMidday 300750.SZ': 'b8e83ec1fd72b0ec',
  'usMidday 510300.SH': '1ff824179867fb93',
  'usMidday 511880.SH': 'f8c7190faacd891e',
  'usMidday 600519.SH': '6cb9d88010ea62bc',
  'usMidday 688256.SH': '71d7b808a8e8bf17',
  'usMidday 832982.BJ': '79d52ccf476668e5',
  'usMidday AAPL.US': '27716ff202f2db6f',
  'usMidday PFE.US': '2b1b7af185d5ad31',
  'usMidday SIM0001.US': '0cc9e9c2cecf77c4',
  'usMidday SIM0137.US': 'b757817284a16876',
  'usMidday SIM0400.US': '91996fe973ec8862',
};

describe('sim golden outputs', () => {
  it('serves exactly the pinned numbers for every symbol, instant and query', async () => {
    const table = await collect();
    if (process.env.SIM_GOLDEN_WRITE) writeFileSync(process.env.SIM_GOLDEN_WRITE, JSON.stringify(table, null, 2));
    expect(table).toEqual(EXPECTED);
  }, 120_000);
});
