// What every fuzzed answer must satisfy (docs/contract.md#errors): a documented status, never a 500; an
// error is our JSON body with Cache-Control: no-store; a 200 of a JSON route is JSON.
import { gunzipSync } from 'node:zlib';
import { REASONS } from '../../src/errors.ts';
import { asErrorBody } from './raw-http.ts';

/**
 * Statuses the contract documents: 200, 304 (If-None-Match), and every status a reason of
 * src/errors.ts stands for (docs/contract.md#errors and the reasons added since), except 500 which is only for bugs.
 */
export const DOCUMENTED_STATUSES = new Set([200, 304, ...Object.values(REASONS).filter((s) => s !== 500)]);

/** Routes whose 200 is not JSON. */
const NON_JSON_200 = [/^\/metrics(\?|$)/, /^\/docs(\/|\?|$)/];

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** The body as text, gunzipped when the server compressed it. */
export function bodyText(headers: Answer['headers'], raw: Buffer): string {
  return headers['content-encoding'] === 'gzip' && raw.length > 0 ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
}

/** Problems with one answer (empty: fine). */
export function contractProblems(method: string, url: string, res: Answer): string[] {
  const problems: string[] = [];
  if (!DOCUMENTED_STATUSES.has(res.status)) problems.push(`undocumented status ${res.status}`);
  if (res.status >= 400) {
    const body = asErrorBody(res);
    if (typeof body === 'string' && method !== 'HEAD') problems.push(`error body: ${body}`);
    if (res.headers['cache-control'] !== 'no-store') problems.push(`error without Cache-Control: no-store (${String(res.headers['cache-control'])})`);
  } else if (res.status === 200 && method !== 'HEAD' && !NON_JSON_200.some((r) => r.test(url))) {
    try {
      JSON.parse(res.body);
    } catch {
      problems.push(`200 with a non-JSON body: ${res.body.slice(0, 120)}`);
    }
  } else if (res.status === 304 && res.body !== '') {
    problems.push('304 with a body');
  }
  return problems;
}

/** Rejects after `ms`: a hang is a failure, not a stuck test run. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
