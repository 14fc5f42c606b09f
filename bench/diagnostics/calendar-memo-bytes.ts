// Bytes per calendar memo entry (src/markets/calendar.ts ENTRY_BYTES), measured in-process: each
// step fills one kind of memo for 20,000 fresh days (the earlier steps have already filled the
// memos it would also touch), and the retained heap after two full GCs is divided by the entries
// it added. Then a random-day workload under the default budget shows the memos stay inside it.
//
//   node bench/diagnostics/calendar-memo-bytes.ts
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  addDays, calendarMemoStats, configureCalendarMemo, DEFAULT_CALENDAR_MEMO_MAX_BYTES, localDate, nextTradingDay, sessions,
} from '../../src/markets/calendar.ts';
import { DAY_MS } from '../../src/markets/time.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const DAYS = 20_000;
const FIRST = '1980-01-01';
const start = Date.UTC(1980, 0, 1);
configureCalendarMemo({ maxBytes: 1 << 30 });
const steps: Array<[string, () => void]> = [
  ['dayString (addDays)', () => { for (let i = 0; i < DAYS; i++) addDays(FIRST, i); }],
  ['tradingDay (nextTradingDay, US)', () => { for (let i = 0; i < DAYS; i++) nextTradingDay('US', addDays(FIRST, i)); }],
  ['offsetDay (localDate, US)', () => { for (let i = 0; i < DAYS; i++) localDate('US', start + i * DAY_MS + 12 * 3_600_000); }],
  ['plan (sessions, US)', () => { for (let i = 0; i < DAYS; i++) sessions('US', addDays(FIRST, i)); }],
];
for (const [name, run] of steps) {
  const before = heap();
  const entries = calendarMemoStats().entries;
  run();
  const added = calendarMemoStats().entries - entries;
  process.stdout.write(`| ${name} | ${added} entries | ${((heap() - before) / Math.max(1, added)).toFixed(0)} B/entry |\n`);
}

configureCalendarMemo({ maxBytes: DEFAULT_CALENDAR_MEMO_MAX_BYTES });
const base = heap();
let peak = 0;
for (let i = 0; i < 200_000; i++) {
  const day = addDays('1990-01-01', Math.floor(Math.random() * 15_000));
  sessions((['CN', 'HK', 'US'] as const)[i % 3], day);
  nextTradingDay('CN', day);
  peak = Math.max(peak, calendarMemoStats().bytes);
}
const stats = calendarMemoStats();
process.stdout.write(`| random days under the default budget | charged peak ${(peak / 1048576).toFixed(2)} MiB of ${(stats.maxBytes / 1048576).toFixed(0)} MiB; retained now ${((heap() - base) / 1048576).toFixed(2)} MiB for ${(stats.bytes / 1048576).toFixed(2)} MiB charged |\n`);
