// Issue 14.9: integer parameters accept decimal digits only, with an optional leading minus, and
// only values a double holds exactly. Everything Number() would also read is refused with the
// same answer as count=abc.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { INTEGER_KEYS, isDecimalInteger, NOT_AN_INTEGER, parseQueryString } from '../../src/http/querystring.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await app.close();
});

const LOOSE = ['0x10', '0X10', '0b101', '0o17', '1e3', '1E3', ' 17 ', '17 ', ' 17', '+5', '1.0', '1.', '.5', '10_000', '١٢', 'Infinity', '-0x10', '\t5', '5\n', '9007199254740993'];

const get = (url: string) => app.inject({ method: 'GET', url, headers: { 'x-api-key': KEYS.demo, 'x-request-id': 'int-test-1' } });

describe('parseQueryString', () => {
  it.each(LOOSE)('replaces count=%j with a value no coercion reads as a number', (value) => {
    const parsed = parseQueryString(new URLSearchParams({ count: value, symbol: value }).toString());
    expect(parsed.count).toBe(NOT_AN_INTEGER);
    expect(Number(parsed.count)).toBeNaN();
    // Other parameters keep their text.
    expect(parsed.symbol).toBe(value);
  });
  it('keeps decimal integers, leading zeros and a leading minus as they are', () => {
    expect(parseQueryString('count=0017&start_time=-86400000&end_time=1700000000000')).toEqual({ count: '0017', start_time: '-86400000', end_time: '1700000000000' });
  });
  it('matches a reference rule on arbitrary strings', () => {
    fc.assert(fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 24 }), fc.stringMatching(/^[-+ 0-9.eExXbBoO_]{0,24}$/)), (s) => {
      const expected = /^-?[0-9]+$/.test(s) && Number.isSafeInteger(Number(s));
      return isDecimalInteger(s) === expected && (expected || parseQueryString(`count=${encodeURIComponent(s)}`).count === NOT_AN_INTEGER);
    }), { numRuns: 2_000 });
  });
});

describe('routes', () => {
  it('every integer query parameter of the OpenAPI document is one the parser checks', async () => {
    const doc = (await app.inject({ url: '/v1/openapi.json' })).json() as { paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string; schema?: { type?: string } }> }>> };
    const integers = new Set<string>();
    for (const operations of Object.values(doc.paths)) {
      for (const op of Object.values(operations)) {
        for (const p of op.parameters ?? []) if (p.in === 'query' && (p.schema?.type === 'integer' || p.schema?.type === 'number')) integers.add(p.name);
      }
    }
    expect([...integers].sort()).toEqual([...INTEGER_KEYS].sort());
  });

  it.each(LOOSE)('count=%j → 400 INVALID_COUNT', async (value) => {
    const res = await get(`/v1/klines?symbol=600519.SH&count=${encodeURIComponent(value)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      code: 400, error: 'INVALID_COUNT', message: 'count must be an integer from 1 to 10000', request_id: 'int-test-1', details: { parameter: 'count' },
    });
  });

  it.each(['0x10', '1e12', ' 17 ', '+5', '1.0'])('start_time=%j and end_time=%j → 400 INVALID_PARAMETER', async (value) => {
    for (const param of ['start_time', 'end_time']) {
      const res = await get(`/v1/klines/ex-factors?symbols=600519.SH&${param}=${encodeURIComponent(value)}`);
      expect(res.statusCode, param).toBe(400);
      expect(res.json(), param).toEqual({
        code: 400, error: 'INVALID_PARAMETER', message: `${param} must be an integer (epoch milliseconds)`, request_id: 'int-test-1', details: { parameter: param },
      });
    }
  });

  it('intraday and batch routes refuse loose counts too', async () => {
    for (const url of ['/v1/klines/intraday?symbol=600519.SH&count=0x10', '/v1/klines/batch?symbols=600519.SH&count=1e3', '/v1/klines/intraday/batch?symbols=600519.SH&count=%2B5']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error, url).toBe('INVALID_COUNT');
    }
  });

  it('plain decimal values still work (count=0016 is 16 bars)', async () => {
    const res = await get('/v1/klines?symbol=600519.SH&count=0016&adjust=none');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.timestamp).toHaveLength(16);
  });
});
