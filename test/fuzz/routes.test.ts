// Property-based fuzzing of every route through app.inject() (issue 14, docs/architecture.md#quality-bars): random and
// adversarial query strings, path parameters, headers, bodies and methods. Every answer: a
// documented status, never a 500, our JSON error body, JSON on JSON routes, within 5 s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '../helpers/app.ts';
import { body, headers, queryString, ROUTES, routePath } from './arbitraries.ts';
import { bodyText, contractProblems, withTimeout } from './contract.ts';

/** Cases per run; FUZZ_RUNS raises it for a long local session. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 4_000);
const CASE_TIMEOUT_MS = 5_000;

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await app.close();
});

const request = fc.constantFrom(...ROUTES).chain((route) => fc.record({
  method: fc.oneof({ weight: 12, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD') }),
  path: routePath(route),
  query: queryString,
  headers,
  body,
  // Each case from its own address: the failed-authentication limit per address (issue 14.8)
  // would otherwise turn most of the run into 429s after the first wrong keys.
  remoteAddress: fc.ipV4(),
}));

describe('every route through app.inject()', () => {
  it(`${RUNS} random requests answer inside the contract`, async () => {
    let cases = 0;
    let lastFailure = '';
    const statuses = new Map<number, number>();
    const property = fc.asyncProperty(request, async (c) => {
      cases++;
      const url = c.query ? `${c.path}?${c.query}` : c.path;
      const withBody = c.method === 'POST' || c.method === 'PUT' || c.method === 'PATCH';
      const res = await withTimeout(app.inject({
        method: c.method as 'GET',
        url,
        headers: c.headers,
        remoteAddress: c.remoteAddress,
        ...(withBody ? { payload: c.body } : {}),
      }), CASE_TIMEOUT_MS, `${c.method} ${url}`);
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      const text = bodyText(res.headers, res.rawPayload);
      const problems = contractProblems(c.method, url, { status: res.statusCode, headers: res.headers, body: text });
      if (problems.length > 0) lastFailure = `${problems.join('; ')}\n  ${c.method} ${url} ${JSON.stringify(c.headers)} → ${res.statusCode} ${text.slice(0, 200)}`;
      return problems.length === 0;
    });
    try {
      await fc.assert(property, { numRuns: RUNS, endOnFailure: true });
    } catch (error) {
      throw new Error(`${lastFailure}\n${(error as Error).message.split('\n').slice(0, 3).join('\n')}`);
    }
    console.log(`route fuzz (app.inject): ${cases} cases run; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
    expect(cases).toBeGreaterThanOrEqual(RUNS);
  }, 120_000);
});
