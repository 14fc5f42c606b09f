// Checks shared by the calendar files' loaders (../holidays.ts, ../futures-sessions.ts): dates and
// clock times as the files write them, and the date-keyed rows (closures, shortened days).

export type Problems = string[];

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const CLOCK = /^([01]\d|2[0-3]):[0-5]\d$/;

/** A real calendar date written YYYY-MM-DD. */
export function isDate(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const m = DATE.exec(value);
  if (m === null) return false;
  const t = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return t.getUTCFullYear() === Number(m[1]) && t.getUTCMonth() === Number(m[2]) - 1 && t.getUTCDate() === Number(m[3]);
}

/** A wall-clock time HH:MM, 00:00 to 23:59. */
export function isClock(value: unknown): value is string {
  return typeof value === 'string' && CLOCK.test(value);
}

function weekday(date: string): number {
  return new Date(`${date}T00:00:00Z`).getUTCDay();
}

/**
 * Rows keyed by a weekday date, ascending without repeats, inside [first, last]: [date, name] when
 * `width` is 2, [date, name, open | null, close | null] when it is 4. Returns the well-formed rows.
 */
export function problemsOfDateRows(
  value: unknown,
  at: string,
  bounds: { first: string | undefined; last: string | undefined; width: 2 | 4 },
  problems: Problems,
): unknown[][] {
  if (!Array.isArray(value)) {
    problems.push(`${at}: an array of rows is required`);
    return [];
  }
  const out: unknown[][] = [];
  let previous = '';
  value.forEach((row, i) => {
    const here = `${at}[${i}]`;
    if (!Array.isArray(row) || row.length !== bounds.width) {
      problems.push(`${here}: ${bounds.width === 2 ? '[date, name]' : '[date, name, open | null, close | null]'} is required`);
      return;
    }
    const [date, name] = row;
    let ok = true;
    if (!isDate(date)) {
      problems.push(`${here}: '${String(date)}' is not a date (YYYY-MM-DD)`);
      ok = false;
    } else {
      if (date <= previous) problems.push(`${here}: ${date} does not follow ${previous} (rows ascend without repeats)`);
      if ((bounds.first !== undefined && date < bounds.first) || (bounds.last !== undefined && date > bounds.last)) {
        problems.push(`${here}: ${date} is outside coverage ${bounds.first ?? '?'}..${bounds.last ?? '?'}`);
      }
      const wd = weekday(date);
      if (wd === 0 || wd === 6) problems.push(`${here}: ${date} is a weekend day (weekends are always closed and not listed)`);
      previous = date;
    }
    if (typeof name !== 'string' || name.trim().length === 0) {
      problems.push(`${here}: a name is required`);
      ok = false;
    }
    if (bounds.width === 4) {
      for (const [k, label] of [[2, 'open'], [3, 'close']] as const) {
        if (row[k] !== null && !isClock(row[k])) {
          problems.push(`${here}: ${label} '${String(row[k])}' is neither null nor a time (HH:MM)`);
          ok = false;
        }
      }
      if (row[2] === null && row[3] === null) problems.push(`${here}: a shortened day needs an open or a close`);
    }
    if (ok) out.push(row);
  });
  return out;
}
