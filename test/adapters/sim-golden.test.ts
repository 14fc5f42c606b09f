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
  'afterAnchor 001289.SZ': 'd13bf13153039db3',
  'afterAnchor 00700.HK': '48527e3c822e959b',
  'afterAnchor 00857.HK': '98bc7d6a2ccf06c2',
  'afterAnchor 02800.HK': '8d0b639a9a83a008',
  'afterAnchor 300750.SZ': '9d15214f933627be',
  'afterAnchor 510300.SH': '62f58b00fd9ff1c9',
  'afterAnchor 511880.SH': 'a1046ce3ea173e31',
  'afterAnchor 600519.SH': '09dc92d9ff71ec21',
  'afterAnchor 688256.SH': '652eb2e38624f2e3',
  'afterAnchor 832982.BJ': '630816e0485db0e9',
  'afterAnchor AAPL.US': '2900148b55d99d39',
  'afterAnchor PFE.US': '1d570c14228a2896',
  'afterAnchor SIM0001.US': '50416b411eef2f56',
  'afterAnchor SIM0137.US': '3fceb9d0a1641435',
  'afterAnchor SIM0400.US': '199573a0d70690dc',
  'cnAfterClose 000656.SZ': '8b6c59e8beef1f6e',
  'cnAfterClose 001289.SZ': 'edbe5d023fa1a9d5',
  'cnAfterClose 00700.HK': '8e22a31b07e752fb',
  'cnAfterClose 00857.HK': 'ab6ac90a98de98fc',
  'cnAfterClose 02800.HK': 'bb2f89f1fea695ac',
  'cnAfterClose 300750.SZ': '5b0610eaec3f6392',
  'cnAfterClose 510300.SH': '8cf16d9eb85cab24',
  'cnAfterClose 511880.SH': 'd23ae6b47bf1aacc',
  'cnAfterClose 600519.SH': 'fea940ab330123d7',
  'cnAfterClose 688256.SH': '97010077f2cd554e',
  'cnAfterClose 832982.BJ': '1b8e2c62ffbe7af0',
  'cnAfterClose AAPL.US': '0111bd1c6606b9ce',
  'cnAfterClose PFE.US': '607c7776bcf54903',
  'cnAfterClose SIM0001.US': 'ee41cca909de20d5',
  'cnAfterClose SIM0137.US': '8901211e6bf1c700',
  'cnAfterClose SIM0400.US': 'b80ff70a9e60bda6',
  'cnMorning 000656.SZ': '4c433e12e556ef54',
  'cnMorning 001289.SZ': '0786de7098b841cf',
  'cnMorning 00700.HK': 'ca31218e584e72b7',
  'cnMorning 00857.HK': 'd032cf9ee58cead7',
  'cnMorning 02800.HK': '3232f3ff3b7cc5fb',
  'cnMorning 300750.SZ': 'c41823d395f13e6a',
  'cnMorning 510300.SH': '47a68a4c0e694404',
  'cnMorning 511880.SH': 'a71cb231806ab73b',
  'cnMorning 600519.SH': 'ebac34c23366e5c3',
  'cnMorning 688256.SH': '767d92ca283b84b2',
  'cnMorning 832982.BJ': 'f99ff7ee6b8e06b4',
  'cnMorning AAPL.US': 'f9000caf5d59a02e',
  'cnMorning PFE.US': '01da8ca2263a2b9e',
  'cnMorning SIM0001.US': 'a9a1fdee6c85e1f2',
  'cnMorning SIM0137.US': '0fe85bc45326df0b',
  'cnMorning SIM0400.US': '8f63ce1312ea56a6',
  'early 000656.SZ': 'f5510bbf9950c2ff',
  'early 001289.SZ': '1e607444bc52e4e3',
  'early 00700.HK': '8de13130fd5ce187',
  'early 00857.HK': '8e1b154ee1ad394c',
  'early 02800.HK': '5e44ad20c69eee7e',
  'early 300750.SZ': '281d99edcb6c2be0',
  'early 510300.SH': '99d9f29eae33d471',
  'early 511880.SH': '28acdacf1fd723a5',
  'early 600519.SH': 'cf62388007af8b6d',
  'early 688256.SH': 'e480fc9c6ce3a013',
  'early 832982.BJ': '37dd714063f51824',
  'early AAPL.US': 'a3e48fcb8fa6e758',
  'early PFE.US': '606c36ea15bcd113',
  'early SIM0001.US': '6796db8b0d0505e6',
  'early SIM0137.US': '4763648e1553a007',
  'early SIM0400.US': '3152e2ddd3cf3669',
  'hkLunch 000656.SZ': '3223b2b48f5f729a',
  'hkLunch 001289.SZ': 'ee17147fad583f2e',
  'hkLunch 00700.HK': '2b3a096749fdeeed',
  'hkLunch 00857.HK': '9fb7172a09d3e0a7',
  'hkLunch 02800.HK': '474b0beafd0648c3',
  'hkLunch 300750.SZ': '25af0e4935553810',
  'hkLunch 510300.SH': '585c1bf4627a06e9',
  'hkLunch 511880.SH': 'ffb09266b2b85499',
  'hkLunch 600519.SH': 'df30b73445b855e7',
  'hkLunch 688256.SH': 'eca4c874797c87f0',
  'hkLunch 832982.BJ': 'a5663d90367cdae5',
  'hkLunch AAPL.US': '5fc265f4cb84d040',
  'hkLunch PFE.US': 'cecd3d964e598917',
  'hkLunch SIM0001.US': 'f7f371d7042c0b16',
  'hkLunch SIM0137.US': 'e444997a8dafad80',
  'hkLunch SIM0400.US': '1369bbb7c3dc1511',
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
  'moving afterAnchor': '9d8eb64442711fb5',
  'moving cnAfterClose': '0fc31c748283200c',
  'moving cnMorning': 'ce9b8900d912b6d8',
  'moving early': '84a20c7b2e2f1374',
  'moving hkLunch': 'e6759155e591c18c',
  'moving saturday': '53ad9363cf20adab',
  'moving usMidday': 'e2dae64d3e24be0c',
  'saturday 000656.SZ': 'c3cbf32c69330cad',
  'saturday 001289.SZ': 'b37d611440853c56',
  'saturday 00700.HK': '48d08030a62f6fd7',
  'saturday 00857.HK': 'fc53591f81ead006',
  'saturday 02800.HK': 'cf6bd9e826da8128',
  'saturday 300750.SZ': '8d9f8860503c3134',
  'saturday 510300.SH': '14296de615b76fb6',
  'saturday 511880.SH': '17f5deb7163881af',
  'saturday 600519.SH': '8db74a89ff3492a6',
  'saturday 688256.SH': '38669d4cfe39bfd3',
  'saturday 832982.BJ': '4a3190222c113f01',
  'saturday AAPL.US': 'da4a4907a7db6f68',
  'saturday PFE.US': '271eb12c9d735f67',
  'saturday SIM0001.US': '960b8c5682665078',
  'saturday SIM0137.US': 'ddea2c08a9e4b425',
  'saturday SIM0400.US': 'b65922c7578d767d',
  'usMidday 000656.SZ': 'a239850c0da908cf',
  'usMidday 001289.SZ': '5818034140a5b363',
  'usMidday 00700.HK': '736024c0e0501f10',
  'usMidday 00857.HK': '8c509cad2fbf89d8',
  'usMidday 02800.HK': 'fd086bad9b3c2a5d',
  'usMidday 300750.SZ': '1364e75f01640067',
  'usMidday 510300.SH': 'b9eac9e3385d3f67',
  'usMidday 511880.SH': '973f8c4081a0e268',
  'usMidday 600519.SH': '7fbc86b27d97e2bf',
  'usMidday 688256.SH': '71d7b808a8e8bf17',
  'usMidday 832982.BJ': 'de5c749ff728e3e9',
  'usMidday AAPL.US': 'd684e864237d3446',
  'usMidday PFE.US': '5f6096470aec921f',
  'usMidday SIM0001.US': '0b1c7e93d4e4ab20',
  'usMidday SIM0137.US': 'b757817284a16876',
  'usMidday SIM0400.US': '5d7dd456a398bb99',
};

describe('sim golden outputs', () => {
  it('serves exactly the pinned numbers for every symbol, instant and query', async () => {
    const table = await collect();
    if (process.env.SIM_GOLDEN_WRITE) writeFileSync(process.env.SIM_GOLDEN_WRITE, JSON.stringify(table, null, 2));
    expect(table).toEqual(EXPECTED);
  }, 120_000);
});
