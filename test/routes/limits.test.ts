// Issue 43.3: a limit that makes an answer shorter than `count` is named in it. count=10000 at 30m
// needs 300,000 one-minute bars, past the 120,000 base bars one request reads (MAX_BASE_BARS): the
// answer comes short, says X-Limited-By: base-bars; limit=120000, and pages on with
// X-Next-End-Time; 5m at the same count fits and names nothing. On the sim, at an instant in
// session and one on a weekend.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BASE_BARS } from '../../src/service/candle-plan.ts';
import { buildTestApp, CN_MORNING, KEYS } from '../helpers/app.ts';

const SUNDAY = Date.UTC(2025, 5, 22, 4, 0, 0); // 2025-06-22 12:00 Asia/Shanghai: every market closed

describe.each([['in session', CN_MORNING], ['on a weekend', SUNDAY]])('X-Limited-By (%s)', (_when, instant) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    ({ app } = await buildTestApp({ now: () => instant }));
  });
  afterAll(async () => {
    await app.close();
  });
  const get = (url: string) => app.inject({ url, headers: { 'x-api-key': KEYS.demo } });

  it.each(['AAPL.US', '600519.SH'])('%s 30m count=10000: shorter than count, names the base-bar cap, and pages on', async (symbol) => {
    const res = await get(`/v1/klines?symbol=${symbol}&period=30m&count=10000`);
    expect(res.statusCode).toBe(200);
    const bars = res.json().data.timestamp as number[];
    expect(bars.length).toBeLessThan(10_000);
    expect(bars.length).toBeGreaterThan(1_900);
    expect(res.headers['x-limited-by']).toBe(`base-bars; limit=${MAX_BASE_BARS['1m']}`);
    expect(Number(res.headers['x-next-end-time'])).toBeLessThan(bars[0]);
    expect(res.headers.link).toMatch(/rel="next"/);
    // The same answer from the response cache names it too.
    const again = await get(`/v1/klines?symbol=${symbol}&period=30m&count=10000`);
    expect(again.headers['x-cache']).toBe('HIT');
    expect(again.headers['x-limited-by']).toBe(res.headers['x-limited-by']);
  });

  it('60m count=10000 names it too; 5m count=10000 fits and names nothing; count alone cutting names nothing', async () => {
    expect((await get('/v1/klines?symbol=AAPL.US&period=60m&count=10000')).headers['x-limited-by']).toBe('base-bars; limit=120000');
    const fits = await get('/v1/klines?symbol=AAPL.US&period=5m&count=10000');
    expect(fits.json().data.timestamp).toHaveLength(10_000);
    expect(fits.headers['x-limited-by']).toBeUndefined();
    const byCount = await get('/v1/klines?symbol=AAPL.US&period=30m&count=100');
    expect(byCount.json().data.timestamp).toHaveLength(100);
    expect(byCount.headers['x-next-end-time']).toBeDefined();
    expect(byCount.headers['x-limited-by']).toBeUndefined();
  });

  it('the batch route names it, with the symbols cut in X-Truncated-Symbols', async () => {
    const res = await get('/v1/klines/batch?symbols=600519.SH,AAPL.US&period=30m&count=10000');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-limited-by']).toBe('base-bars; limit=120000');
    expect(res.headers['x-truncated-symbols']).toBe('600519.SH,AAPL.US');
    const small = await get('/v1/klines/batch?symbols=600519.SH,AAPL.US&period=30m&count=10');
    expect(small.headers['x-limited-by']).toBeUndefined();
  });
});

describe('X-Limited-By over a real socket', () => {
  it('the cache-hit fast path replays it', async () => {
    const { app } = await buildTestApp();
    try {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/v1/klines?symbol=AAPL.US&period=60m&count=10000`;
      const served = () => app.fastPathServed?.() ?? 0;
      const first = await fetch(url, { headers: { 'x-api-key': KEYS.demo } });
      await first.arrayBuffer();
      expect(first.headers.get('x-limited-by')).toBe('base-bars; limit=120000');
      const before = served();
      const hit = await fetch(url, { headers: { 'x-api-key': KEYS.demo } });
      await hit.arrayBuffer();
      expect(served()).toBe(before + 1);
      expect(hit.headers.get('x-limited-by')).toBe('base-bars; limit=120000');
    } finally {
      await app.close();
    }
  });
});

describe('the documented limits', () => {
  it('count names the base-bar cap, max_bars and vendor history in OpenAPI; X-Limited-By is a documented header', async () => {
    const { app } = await buildTestApp();
    try {
      const doc = (await app.inject({ url: '/v1/openapi.json' })).json();
      for (const path of ['/v1/klines', '/v1/klines/batch']) {
        const op = doc.paths[path].get;
        const count = op.parameters.find((p: { name: string }) => p.name === 'count');
        expect(count.description).toMatch(/120,000 one-minute bars/);
        expect(count.description).toMatch(/X-Limited-By: base-bars; limit=120000/);
        expect(count.description).toMatch(/REQUEST_TOO_LARGE/);
        expect(op.responses['200'].headers['X-Limited-By'].description).toMatch(/base-bars/);
      }
    } finally {
      await app.close();
    }
  });
});
