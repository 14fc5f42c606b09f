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
    out[name] = digest(await adapter.getCandles!({ symbol: s, ...q }));
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
  out.quote = digest([...(await adapter.getQuotes!([s])).entries()]);
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
  'afterAnchor 000656.SZ': 'd1427f3e2739cd0e',
  'afterAnchor 001289.SZ': 'faf103fc592b0ee1',
  'afterAnchor 00700.HK': 'f9ed326304da7d0f',
  'afterAnchor 00857.HK': 'ec50e884c642856c',
  'afterAnchor 02800.HK': '4d1a38ec42c85bcd',
  'afterAnchor 300750.SZ': 'ca6e0244be6f6dae',
  'afterAnchor 510300.SH': 'c815f47b9a919115',
  'afterAnchor 511880.SH': '2f8c0988e7c744ae',
  'afterAnchor 600519.SH': '03de2306f4dbfb43',
  'afterAnchor 688256.SH': '28cad9a7185feb00',
  'afterAnchor 832982.BJ': '3f129c7a202e4ab0',
  'afterAnchor AAPL.US': 'fd195375e8f7b352',
  'afterAnchor PFE.US': 'de4e248773d87b12',
  'afterAnchor SIM0001.US': 'ef66f94a792faaf8',
  'afterAnchor SIM0137.US': '1531bdd824d4fa23',
  'afterAnchor SIM0400.US': '4f6ae9193f712254',
  'cnAfterClose 000656.SZ': '88d1cdefadac29b7',
  'cnAfterClose 001289.SZ': '46a963000e8a2adb',
  'cnAfterClose 00700.HK': '3d0df74231e9dffe',
  'cnAfterClose 00857.HK': '39da7ff1ce2c0a55',
  'cnAfterClose 02800.HK': 'cfe900c5b0452f39',
  'cnAfterClose 300750.SZ': '3b9816bcac41875f',
  'cnAfterClose 510300.SH': '778f2e02605721ea',
  'cnAfterClose 511880.SH': 'bac2432ee014bcf2',
  'cnAfterClose 600519.SH': '44bf881c56a4cb30',
  'cnAfterClose 688256.SH': 'a7c47b741283a7c7',
  'cnAfterClose 832982.BJ': '421ce0c521f338e2',
  'cnAfterClose AAPL.US': '4f274c98204d752a',
  'cnAfterClose PFE.US': '252730f635765f85',
  'cnAfterClose SIM0001.US': '5226e91aa3439e8b',
  'cnAfterClose SIM0137.US': 'c3b6ec5d5d13de3f',
  'cnAfterClose SIM0400.US': '40f59bb6087d1219',
  'cnMorning 000656.SZ': '8849a18e2df1df74',
  'cnMorning 001289.SZ': '3b2f9d49b0f37051',
  'cnMorning 00700.HK': '950c60237d24c40d',
  'cnMorning 00857.HK': '814f84529add44d9',
  'cnMorning 02800.HK': '407770b364a0b21c',
  'cnMorning 300750.SZ': 'a3c88af169a31007',
  'cnMorning 510300.SH': '5b855e1d104d813f',
  'cnMorning 511880.SH': 'f5bb539ad40f43fc',
  'cnMorning 600519.SH': '226aeb2881c546a4',
  'cnMorning 688256.SH': '7fd6567193099440',
  'cnMorning 832982.BJ': 'f241280926f61a4b',
  'cnMorning AAPL.US': '8bcfdae9249256d1',
  'cnMorning PFE.US': '89aed7b47237a67d',
  'cnMorning SIM0001.US': 'b90d04c2da67d73d',
  'cnMorning SIM0137.US': '6179deba5af10ae6',
  'cnMorning SIM0400.US': '562f2690dca82ab3',
  'early 000656.SZ': '7c16a890845ed266',
  'early 001289.SZ': '1e607444bc52e4e3',
  'early 00700.HK': '3bba8821b798479d',
  'early 00857.HK': 'cfde6043b1f7c66a',
  'early 02800.HK': '574d2e70d0fae51b',
  'early 300750.SZ': '281d99edcb6c2be0',
  'early 510300.SH': '99d9f29eae33d471',
  'early 511880.SH': '28acdacf1fd723a5',
  'early 600519.SH': '5f41d53aa8a1f23b',
  'early 688256.SH': 'e480fc9c6ce3a013',
  'early 832982.BJ': '37dd714063f51824',
  'early AAPL.US': '4047c8bd522dcba7',
  'early PFE.US': 'ccc8784a437433cb',
  'early SIM0001.US': '6796db8b0d0505e6',
  'early SIM0137.US': '4763648e1553a007',
  'early SIM0400.US': '3152e2ddd3cf3669',
  'hkLunch 000656.SZ': '16555bbe636f263a',
  'hkLunch 001289.SZ': '5c24543dc43a0ac5',
  'hkLunch 00700.HK': 'fd2c5d1b0ff5a95a',
  'hkLunch 00857.HK': '86eb9246a73cd1f6',
  'hkLunch 02800.HK': '5996b03c21d78c49',
  'hkLunch 300750.SZ': 'b7a336c9a7cdfda0',
  'hkLunch 510300.SH': '9af3a71a7764853c',
  'hkLunch 511880.SH': '755b1493ad687652',
  'hkLunch 600519.SH': '41b87bad7f065002',
  'hkLunch 688256.SH': '10e4480d83251520',
  'hkLunch 832982.BJ': '80a621eb08341f36',
  'hkLunch AAPL.US': '5855f0489d5a60b0',
  'hkLunch PFE.US': '0b3553f69a0945cb',
  'hkLunch SIM0001.US': '20d3755d1d30cd01',
  'hkLunch SIM0137.US': 'c0294ad76b01ad16',
  'hkLunch SIM0400.US': '05a7735e0e979038',
  'market afterAnchor 000656.SZ': 'aa6ad9118f28f8a4',
  'market afterAnchor 001289.SZ': 'd62fc6f4844c8c3f',
  'market afterAnchor 00700.HK': '2de13d019e3f7820',
  'market afterAnchor 00857.HK': '76736e40f08674e7',
  'market afterAnchor 02800.HK': 'ffb69edddcd399ca',
  'market afterAnchor 300750.SZ': 'ea1fc74f378736d8',
  'market afterAnchor 510300.SH': '20f072ac004f88dd',
  'market afterAnchor 511880.SH': '067b87c0b2508ddc',
  'market afterAnchor 600519.SH': 'b8fd052aa8ec7c08',
  'market afterAnchor 688256.SH': '399a545ecddc8a5f',
  'market afterAnchor 832982.BJ': '81d24144e94f6a75',
  'market afterAnchor AAPL.US': '84c59d05dac566c7',
  'market afterAnchor PFE.US': '8cd5e8a09160078e',
  'market afterAnchor SIM0001.US': 'a7ae5aaf047b6381',
  'market afterAnchor SIM0137.US': '4adc5c7a51086842',
  'market afterAnchor SIM0400.US': 'b2635d0f06d0b4d1',
  'market cnAfterClose 000656.SZ': '9f5f58ec55d1e03d',
  'market cnAfterClose 001289.SZ': 'd9129e374ca1ca9f',
  'market cnAfterClose 00700.HK': '1324c3988cdd478f',
  'market cnAfterClose 00857.HK': 'cde248b525e80fe1',
  'market cnAfterClose 02800.HK': '343efae7ba2f1f7d',
  'market cnAfterClose 300750.SZ': '9e9c2f537a5961b9',
  'market cnAfterClose 510300.SH': '74a5847de95cb1ab',
  'market cnAfterClose 511880.SH': 'df23ebf952c0c6de',
  'market cnAfterClose 600519.SH': 'a3c40f1f232af5c0',
  'market cnAfterClose 688256.SH': '74ef00f25494d969',
  'market cnAfterClose 832982.BJ': '90c5c7833289d12b',
  'market cnAfterClose AAPL.US': '2d86022dfa25105d',
  'market cnAfterClose PFE.US': '472f384f78a50ef9',
  'market cnAfterClose SIM0001.US': 'd5f36faef4b0c5fd',
  'market cnAfterClose SIM0137.US': '21304739a4e10f6e',
  'market cnAfterClose SIM0400.US': '5ab5045627cb7b9f',
  'moving afterAnchor': 'fdba9a35163c032e',
  'moving cnAfterClose': '0511bdff2e08d94d',
  'moving cnMorning': '551260fc893d8253',
  'moving early': '42243b61aefe752c',
  'moving hkLunch': '62b0c33b1253c55e',
  'moving saturday': '571e1b78c0b2ff69',
  'moving usMidday': 'ebca9dd0123cdda9',
  'saturday 000656.SZ': '473bad4a7d9a2829',
  'saturday 001289.SZ': '6807bd8c7ab54666',
  'saturday 00700.HK': '81ef8d0101ee5724',
  'saturday 00857.HK': '191b011d698dbebc',
  'saturday 02800.HK': '44da9b014b42f505',
  'saturday 300750.SZ': 'faf647a4b3df9058',
  'saturday 510300.SH': 'a67301d2aa0fdb3d',
  'saturday 511880.SH': '42c67c2a6341b862',
  'saturday 600519.SH': 'a3f6178df62eff5d',
  'saturday 688256.SH': '9a01b0f617ba02cb',
  'saturday 832982.BJ': 'fce3417fb3ae14e7',
  'saturday AAPL.US': '747556612d7a6835',
  'saturday PFE.US': 'f1e5ec40c501401e',
  'saturday SIM0001.US': '90960a0f589470ae',
  'saturday SIM0137.US': '93385705e51538d5',
  'saturday SIM0400.US': 'ed9be3d68a4319e8',
  'usMidday 000656.SZ': '5183934887d080f4',
  'usMidday 001289.SZ': '5874208163494f3f',
  'usMidday 00700.HK': '1f46890ff8372997',
  'usMidday 00857.HK': '0e64f45360d403a3',
  'usMidday 02800.HK': 'becc6b1df6a8885e',
  'usMidday 300750.SZ': '96f8e516a4ca0fe1',
  'usMidday 510300.SH': '609154499d43367e',
  'usMidday 511880.SH': '463326763f3b70a0',
  'usMidday 600519.SH': '475d8a2bf2d97a25',
  'usMidday 688256.SH': 'a4069ed79a026795',
  'usMidday 832982.BJ': '79d52ccf476668e5',
  'usMidday AAPL.US': '29b679af5680dfd2',
  'usMidday PFE.US': '8c5e28fb4cca0568',
  'usMidday SIM0001.US': '96b4cfc681456d22',
  'usMidday SIM0137.US': 'caec852c395f4647',
  'usMidday SIM0400.US': '0a943345f9e90147',
};

describe('sim golden outputs', () => {
  it('serves exactly the pinned numbers for every symbol, instant and query', async () => {
    const table = await collect();
    if (process.env.SIM_GOLDEN_WRITE) writeFileSync(process.env.SIM_GOLDEN_WRITE, JSON.stringify(table, null, 2));
    expect(table).toEqual(EXPECTED);
  }, 120_000);
});
