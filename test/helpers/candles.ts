// Shared checks and clock arithmetic for the route tests: the columnar candle invariants of
// docs/contract.md#shapes-and-units and exchange-local times computed independently of src/markets/calendar.ts.
import { expect } from 'vitest';

export interface CandlesBody {
  timestamp: number[];
  open: number[];
  high: number[];
  low: number[];
  close: number[];
  volume: number[];
  amount: number[];
  prev_close: number[];
}

export const COLUMNS = ['timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prev_close'] as const;

export const TZ = { CN: 'Asia/Shanghai', HK: 'Asia/Hong_Kong', US: 'America/New_York' } as const;
export type Region = keyof typeof TZ;

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
      hourCycle: 'h23', weekday: 'short',
    });
    formatters.set(tz, f);
  }
  return f;
}

export interface LocalTime {
  date: string;
  time: string;
  seconds: number;
  weekday: string;
  ms: number;
}

/** Exchange-local wall clock of an instant. */
export function local(region: Region, ts: number): LocalTime {
  const parts = Object.fromEntries(formatter(TZ[region]).formatToParts(new Date(ts)).map((p) => [p.type, p.value]));
  return {
    date: `${parts.year}-${parts.month}-${parts.day}`,
    time: `${parts.hour}:${parts.minute}`,
    seconds: Number(parts.second),
    weekday: String(parts.weekday),
    ms: ts % 1000,
  };
}

/** True when `ts` is 00:00:00.000 exchange-local. */
export function isLocalMidnight(region: Region, ts: number): boolean {
  const t = local(region, ts);
  return t.time === '00:00' && t.seconds === 0 && t.ms === 0;
}

/** Every invariant of a Candles body: equal column lengths, strictly ascending, integer volumes, prev_close chain. */
export function expectCandles(c: CandlesBody, label = ''): void {
  expect(Object.keys(c).sort(), label).toEqual([...COLUMNS].sort());
  const n = c.timestamp.length;
  for (const column of COLUMNS) expect(c[column].length, `${label} ${column}`).toBe(n);
  // Collected in plain JS and asserted once: series run to thousands of bars.
  const problems: string[] = [];
  for (let k = 0; k < n && problems.length < 10; k++) {
    if (!Number.isInteger(c.timestamp[k])) problems.push(`timestamp[${k}] not an integer`);
    if (!Number.isInteger(c.volume[k])) problems.push(`volume[${k}] not an integer`);
    if (k > 0 && !(c.timestamp[k] > c.timestamp[k - 1])) problems.push(`timestamp[${k}] not after timestamp[${k - 1}]`);
    if (k > 0 && c.prev_close[k] !== c.close[k - 1]) problems.push(`prev_close[${k}]=${c.prev_close[k]} but close[${k - 1}]=${c.close[k - 1]}`);
    if (!(c.high[k] >= c.low[k])) problems.push(`high[${k}] < low[${k}]`);
    if (!(c.high[k] >= Math.max(c.open[k], c.close[k]) - 1e-9)) problems.push(`high[${k}] below open/close`);
    if (!(c.low[k] <= Math.min(c.open[k], c.close[k]) + 1e-9)) problems.push(`low[${k}] above open/close`);
  }
  expect(problems, label).toEqual([]);
}

/** Bars [from, to) of a Candles body. */
export function slice(c: CandlesBody, from: number, to: number): CandlesBody {
  const out = {} as CandlesBody;
  for (const column of COLUMNS) (out[column] as number[]) = c[column].slice(from, to);
  return out;
}

/** Aggregate bars by a key function: open first, close last, high max, low min, sums; stamped by `stamp`. */
export function aggregate(c: CandlesBody, keyOf: (ts: number) => string, stamp: (key: string, lastTs: number) => number) {
  const groups: { key: string; idx: number[] }[] = [];
  c.timestamp.forEach((ts, i) => {
    const key = keyOf(ts);
    const last = groups.at(-1);
    if (last !== undefined && last.key === key) last.idx.push(i);
    else groups.push({ key, idx: [i] });
  });
  return groups.map(({ key, idx }) => ({
    timestamp: stamp(key, c.timestamp[idx.at(-1)!]),
    open: c.open[idx[0]],
    high: Math.max(...idx.map((i) => c.high[i])),
    low: Math.min(...idx.map((i) => c.low[i])),
    close: c.close[idx.at(-1)!],
    volume: idx.reduce((s, i) => s + c.volume[i], 0),
    amount: idx.reduce((s, i) => s + c.amount[i], 0),
  }));
}

/** Epoch ms of a CN/HK (UTC+8, no DST) wall-clock time. */
export function utc8(date: string, time = '00:00'): number {
  const [y, m, d] = date.split('-').map(Number);
  const [hh, mm] = time.split(':').map(Number);
  return Date.UTC(y, m - 1, d, hh - 8, mm);
}
