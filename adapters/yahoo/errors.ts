// Yahoo chart envelope → result, a miss, or our reasons. Errors arrive as
// `{chart: {result: null, error: {code, description}}}`, with 404 for an unknown ticker and 400
// for a refused request; a 200 can carry `chart.error` too. A 429 (Yahoo's usual plain-text
// "Too Many Requests") is turned into UPSTREAM_UNAVAILABLE by the http layer before we see it.

import type { UpstreamResponse } from '../types.ts';
import { AppError, type Reason } from '../../src/errors.ts';
import { isRecord, type JsonRecord, type PayloadReader } from '../common/validate.ts';

export const ADAPTER_ID = 'yahoo';

export const NOT_FOUND = Symbol('yahoo.not_found');
/** "Nothing in that window" for a known ticker: an empty result, never a vendor failure. */
export const NO_DATA = Symbol('yahoo.no_data');
type Verdict = Reason | typeof NOT_FOUND;

const CODE_TABLE: Record<string, Verdict> = {
  'Not Found': NOT_FOUND,
  'Bad Request': 'UPSTREAM_ERROR',
  Unauthorized: 'UPSTREAM_ERROR',
  'Too Many Requests': 'UPSTREAM_UNAVAILABLE',
};

const STATUS_TABLE: Record<number, Verdict> = {
  400: 'UPSTREAM_ERROR',
  404: NOT_FOUND,
};

/**
 * Descriptions Yahoo gives (with 400 "Bad Request") for a window with no bars: before the first
 * bar, or older than it keeps for the interval. Client libraries treat both as an empty answer
 * (see mocks/fixtures/yahoo/README.md).
 */
const NO_DATA_DESCRIPTIONS = ["Data doesn't exist for startDate", 'The requested range must be within the last'];

/** `chart.result[0]`, NOT_FOUND (unknown ticker) or NO_DATA (known ticker, empty window). */
export function readChart(res: UpstreamResponse, r: PayloadReader): JsonRecord | typeof NOT_FOUND | typeof NO_DATA {
  const ok = res.status >= 200 && res.status < 300;
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    if (ok) r.fail('body');
  }
  const chart = isRecord(body) && isRecord(body.chart) ? body.chart : undefined;
  const error = chart !== undefined && isRecord(chart.error) ? chart.error : undefined;
  const code = typeof error?.code === 'string' ? error.code : undefined;
  if (!ok || error !== undefined) {
    const byCode = code !== undefined && Object.hasOwn(CODE_TABLE, code) ? CODE_TABLE[code] : undefined;
    const verdict = byCode ?? STATUS_TABLE[res.status] ?? 'UPSTREAM_ERROR';
    if (verdict === NOT_FOUND) return NOT_FOUND;
    const description = typeof error?.description === 'string' ? error.description : '';
    if (NO_DATA_DESCRIPTIONS.some((prefix) => description.startsWith(prefix))) return NO_DATA;
    throw new AppError(verdict, 'The upstream data source answered with an error', {
      details: { adapter: ADAPTER_ID, status: res.status, vendor_code: code },
    });
  }
  if (chart === undefined) r.fail('chart');
  const results = r.array(chart!.result, 'chart.result');
  if (results.length === 0) return NOT_FOUND;
  return r.record(results[0], 'chart.result[0]');
}
