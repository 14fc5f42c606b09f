// The candles loaded for one chart (symbol, period, adjust) and how older pages join them. No DOM
// and no imports: the same module runs in the page and in Node (test/explorer/history.test.ts).
//
// An older page is asked for with the next-page cursor when the newest answer carried one
// (`X-Next-End-Time`: the end_time of the next, older page), else with end_time = the first loaded
// bar's timestamp − 1 and the same count. An empty answer means the history is exhausted.
//
// Weekly and longer bars are labelled by their last trading day, so "first bar − 1" falls inside the
// first bar's own week and the service answers that week again, cut short (a Thursday bar before
// the Friday one). For those periods `periodStart` moves the end back to just before the first bar's
// period begins; bars of that period in an answer are dropped either way.

// The futures columns ride along when the answer has them (an equity's data has none).
export const COLUMNS = ['timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prev_close', 'open_interest', 'settlement_price'];
const FUTURES_COLUMNS = new Set(['open_interest', 'settlement_price']);

/** The cursor of an answer, or undefined when it has none (or an unreadable one). */
export function nextEndTimeOf(headers) {
  const raw = headers?.get?.('x-next-end-time');
  if (raw === null || raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** The query of the next older page. */
export function olderPageQuery({ symbol, period, adjust }, { firstTimestamp, nextEndTime, count, periodStart = (ts) => ts }) {
  const endTime = nextEndTime ?? periodStart(firstTimestamp) - 1;
  return new URLSearchParams({ symbol, period, adjust, count: String(count), end_time: String(endTime) });
}

/** Only the page's bars strictly older than `before` (a page that overlaps what is loaded loses the overlap). */
export function olderPart(page, before) {
  const keep = page.timestamp.findIndex((ts) => ts >= before);
  const end = keep < 0 ? page.timestamp.length : keep;
  const out = {};
  for (const column of COLUMNS) if (Array.isArray(page[column])) out[column] = page[column].slice(0, end);
  return out;
}

export class History {
  /**
   * `first` is the first answer ({data, headers}) for `params` ({symbol, period, adjust}).
   * `fetchPage(query: URLSearchParams)` resolves with {data, headers} of GET /v1/klines?query.
   * `periodStart(timestamp)` is the start of the period of the bar at `timestamp` (the bar itself
   * for minute and daily bars; format.js periodStartOf).
   */
  constructor(params, first, fetchPage, { periodStart = (ts) => ts } = {}) {
    this.periodStart = periodStart;
    this.params = params;
    this.data = {};
    for (const column of COLUMNS) {
      // A futures column only when the answer has it (an equity's data keeps its own columns).
      if (FUTURES_COLUMNS.has(column) && !Array.isArray(first.data[column])) continue;
      this.data[column] = Array.isArray(first.data[column]) ? [...first.data[column]] : [];
    }
    this.nextEndTime = nextEndTimeOf(first.headers);
    this.exhausted = this.data.timestamp.length === 0;
    this.pages = 0;
    this.fetchPage = fetchPage;
    this.pending = undefined;
  }

  get count() {
    return this.data.timestamp.length;
  }

  get firstTimestamp() {
    return this.data.timestamp[0];
  }

  /**
   * Load one older page of `count` bars. Resolves with the older part added in front (columnar,
   * possibly empty); concurrent calls share the request in flight.
   */
  older(count) {
    if (this.pending !== undefined) return this.pending;
    if (this.exhausted) return Promise.resolve(olderPart(this.data, -Infinity));
    const query = olderPageQuery(this.params, {
      firstTimestamp: this.firstTimestamp, nextEndTime: this.nextEndTime, count, periodStart: this.periodStart,
    });
    this.pending = this.fetchPage(query).then(({ data, headers }) => {
      const added = olderPart(data, this.periodStart(this.firstTimestamp));
      this.pages += 1;
      this.nextEndTime = nextEndTimeOf(headers);
      // Empty, or nothing older than what is loaded (an answer that ignored end_time): the end.
      if (added.timestamp.length === 0) this.exhausted = true;
      for (const column of COLUMNS) if (this.data[column] !== undefined) this.data[column] = [...(added[column] ?? []), ...this.data[column]];
      return added;
    }).finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }
}

/** `months` calendar months before `seconds` (chart time: UTC seconds that read as exchange time). */
export function monthsBefore(seconds, months) {
  const date = new Date(seconds * 1000);
  const day = date.getUTCDate();
  date.setUTCDate(1);
  date.setUTCMonth(date.getUTCMonth() - months);
  const lastDay = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  date.setUTCDate(Math.min(day, lastDay));
  return Math.floor(date.getTime() / 1000);
}

/** Rough bars per calendar day of a period (trading hours and weekdays only), to size a page. */
const BARS_PER_DAY = {
  '1m': 330, '5m': 66, '10m': 33, '15m': 22, '30m': 11, '60m': 6, '1d': 5 / 7, '1w': 1 / 7, '1M': 1 / 30, '1Q': 1 / 91, '1Y': 1 / 365,
};

/** How many bars to ask for to cover `seconds` of calendar time, within [min, max]. */
export function barsToCover(period, seconds, { min = 100, max = 5000 } = {}) {
  const days = Math.max(0, seconds) / 86_400;
  const estimate = Math.ceil(days * (BARS_PER_DAY[period] ?? 1) * 1.1);
  return Math.min(max, Math.max(min, estimate));
}
