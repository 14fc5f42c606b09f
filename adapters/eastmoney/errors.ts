// Eastmoney envelopes → data, a miss, or our reasons. Eastmoney answers 200 for almost
// everything; the verdict is inside the body. HTTP-level failures (429, 5xx, resets) are already
// AppErrors from the http layer; hosts.ts decides which of them cool a host.

import { AppError, type Reason } from '../../src/errors.ts';
import type { JsonRecord, PayloadReader } from '../common/validate.ts';

export const ADAPTER_ID = 'eastmoney';

/** "This secid has no data": an unknown symbol, returned as undefined / omitted. */
export const NOT_FOUND = Symbol('eastmoney.not_found');

function vendorError(reason: Reason, details: Record<string, unknown>): AppError {
  return new AppError(reason, 'The upstream data source answered with an error', {
    details: { adapter: ADAPTER_ID, ...details },
  });
}

/**
 * push2 / push2his: `{rc, rt, svr, lt, full, data}`. `data: null` is how an unknown secid
 * answers, with rc 0 on some endpoints and rc 100 / 102 on others (ulist, push2his kline,
 * trends2): whatever the rc, a null `data` is "no such code", an answer and never a vendor
 * failure (it must not count against the breaker). rc ≠ 0 WITH data is not a shape any client
 * library documents: an error. Unknown top-level keys are ignored.
 */
export function readPush(text: string, r: PayloadReader): JsonRecord | typeof NOT_FOUND {
  const body = r.record(r.json(text, 'body'), 'body');
  const rc = r.number(body.rc, 'rc');
  if (body.data === null || body.data === undefined) return NOT_FOUND;
  if (rc !== 0) throw vendorError('UPSTREAM_ERROR', { rc });
  return r.record(body.data, 'data');
}

/** datacenter `code` → verdict; 0 is success with rows. */
const DATACENTER_CODES: Record<number, 'empty' | Reason> = {
  9201: 'empty', // 返回数据为空: no rows (a stock that never paid a dividend)
  9501: 'UPSTREAM_ERROR', // 报表配置不存在: our report name or filter is wrong
};

/** datacenter-web `{version, result: {pages, data, count} | null, success, message, code}` → rows. */
export function readDatacenter(text: string, r: PayloadReader): unknown[] {
  const body = r.record(r.json(text, 'body'), 'body');
  const code = r.number(body.code, 'code');
  if (code === 0 && body.success === true) {
    if (body.result === null) return [];
    return r.array(r.record(body.result, 'result').data, 'result.data');
  }
  const verdict = DATACENTER_CODES[code] ?? 'UPSTREAM_ERROR';
  if (verdict === 'empty') return [];
  throw vendorError(verdict, { code });
}
