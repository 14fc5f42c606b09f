// The cache-hit fast path (issue 15, src/http/fast-path.ts) over a real socket: it keeps every
// guarantee of the normal path (auth, plan, rate limit, headers, 304, gzip, shutdown), and
// answers only fresh hits of URLs the normal path stored.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, KEYS } from '../helpers/app.ts';

let app: FastifyInstance;
let base: string;
let clock = Date.UTC(2025, 5, 18, 2, 15, 30);

beforeAll(async () => {
  ({ app } = await buildTestApp({ now: () => clock }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
});
afterAll(() => app.close());

async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  const res = await fetch(`${base}${path}`, { headers: { 'accept-encoding': 'identity', ...headers } });
  return { status: res.status, headers: Object.fromEntries(res.headers), body: Buffer.from(await res.arrayBuffer()) };
}

/** Served by the fast path: its request ids come from a counter, the normal path's are UUIDs. */
const fast = (headers: Record<string, string>) => !/^[0-9a-f]{8}-[0-9a-f]{4}-/.test(headers['x-request-id']);

describe('cache-hit fast path', () => {
  it('serves the second identical request with the same bytes and headers as the normal path would', async () => {
    const path = '/v1/quotes?symbols=600519.SH,00700.HK,NOPE.US';
    const first = await get(path, { 'x-api-key': KEYS.demo });
    expect(first.status).toBe(200);
    expect(first.headers['x-cache']).toBe('MISS');
    expect(fast(first.headers)).toBe(false);
    const second = await get(path, { 'x-api-key': KEYS.demo });
    expect(fast(second.headers)).toBe(true);
    expect(second.status).toBe(200);
    expect(second.body.equals(first.body)).toBe(true);
    const slowHit = await app.inject({ url: path, headers: { 'x-api-key': KEYS.demo } });
    expect(slowHit.headers['x-cache']).toBe('HIT');
    for (const name of ['content-type', 'x-upstream', 'x-simulated', 'x-missing-symbols', 'x-cache', 'x-cache-tier', 'etag', 'vary', 'age', 'content-length', 'x-ratelimit-limit']) {
      expect([name, second.headers[name]]).toEqual([name, String(slowHit.headers[name])]);
    }
    expect(Number(second.headers['x-ratelimit-remaining'])).toBe(Number(first.headers['x-ratelimit-remaining']) - 1);
  });

  it('never lets a wrong key, a plan without the market, or a query key through', async () => {
    const path = '/v1/quotes?symbols=00700.HK';
    await get(path, { 'x-api-key': KEYS.demo });
    const wrong = await get(path, { 'x-api-key': 'not-a-key' });
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body.toString()).error).toBe('INVALID_API_KEY');
    const noHk = await get(path, { 'x-api-key': KEYS.cnDaily });
    expect(noHk.status).toBe(403);
    expect(JSON.parse(noHk.body.toString()).error).toBe('MARKET_NOT_PERMITTED');
    const missing = await get(path);
    expect(missing.status).toBe(401);
    const query = await get(`${path}&api_key=${KEYS.demo}`);
    expect(query.status).toBe(200);
    expect(fast(query.headers)).toBe(false);
  });

  it('counts hits against the rate limit and leaves the 429 to the normal path', async () => {
    const path = '/v1/quotes?symbols=600000.SH';
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await get(path, { 'x-api-key': KEYS.tiny }));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429, 429]);
    expect(answers.slice(1, 3).every((a) => fast(a.headers))).toBe(true);
    expect(answers.map((a) => a.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0', '0']);
    expect(JSON.parse(answers[3].body.toString())).toMatchObject({ code: 429, error: 'RATE_LIMITED' });
  });

  it('answers If-None-Match with 304 and serves the gzip variant once the normal path built it', async () => {
    const path = '/v1/klines?symbol=600519.SH&period=1d&count=300&adjust=none';
    const first = await get(path, { 'x-api-key': KEYS.demo });
    const etag = first.headers.etag;
    const revalidated = await get(path, { 'x-api-key': KEYS.demo, 'if-none-match': etag });
    expect(revalidated.status).toBe(304);
    expect(fast(revalidated.headers)).toBe(true);
    expect(revalidated.body.length).toBe(0);
    const gz1 = await get(path, { 'x-api-key': KEYS.demo, 'accept-encoding': 'gzip' });
    expect(gz1.headers['content-encoding']).toBe('gzip');
    expect(fast(gz1.headers)).toBe(false);
    const gz2 = await get(path, { 'x-api-key': KEYS.demo, 'accept-encoding': 'gzip' });
    expect(fast(gz2.headers)).toBe(true);
    expect(gz2.headers['content-encoding']).toBe('gzip');
    expect(gz2.headers.etag).toBe(gz1.headers.etag);
    expect(gz2.body.equals(gz1.body)).toBe(true);
  });

  it('leaves a request without Host to the normal path, which answers 400 with the error body', async () => {
    const path = '/v1/quotes?symbols=600036.SH';
    await get(path, { 'x-api-key': KEYS.demo });
    expect(fast((await get(path, { 'x-api-key': KEYS.demo })).headers)).toBe(true);
    const { port } = app.server.address() as { port: number };
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.end(`GET ${path} HTTP/1.1\r\nX-API-Key: ${KEYS.demo}\r\n\r\n`));
      let text = '';
      socket.on('data', (chunk) => (text += String(chunk)));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw.startsWith('HTTP/1.1 400')).toBe(true);
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: 'INVALID_PARAMETER' });
  });

  it('stops serving once the entry is no longer fresh', async () => {
    const path = '/v1/quotes?symbols=601318.SH';
    await get(path, { 'x-api-key': KEYS.demo });
    expect(fast((await get(path, { 'x-api-key': KEYS.demo })).headers)).toBe(true);
    clock += 3_000;
    const later = await get(path, { 'x-api-key': KEYS.demo });
    expect(fast(later.headers)).toBe(false);
    expect(later.headers['x-cache']).not.toBe('HIT');
  });
});

describe('fast-path URL index', () => {
  it('is bounded by bytes (an eighth of the response cache, at least 1 MiB), reported in /metrics', async () => {
    const { app: own } = await buildTestApp({ configure: (config) => { config.cache.responseMaxBytes = 4 * 1_048_576; } });
    try {
      // Long distinct URLs (an ignored parameter pads them), each a different answer stored by the
      // normal path and recorded in the index.
      const pad = 'x'.repeat(1_500);
      for (let i = 0; i < 600; i++) {
        const res = await own.inject({ url: `/v1/klines?symbol=600519.SH&period=1d&count=${i + 1}&pad=${pad}`, headers: { 'x-api-key': KEYS.demo } });
        expect(res.statusCode).toBe(200);
      }
      const metrics = (await own.inject({ url: '/metrics' })).body;
      const bytes = Number(/^mdqs_cache_bytes\{layer="fast_path_index"\} (\d+)/m.exec(metrics)?.[1]);
      // 600 entries of ~3.7 KB would be ~2.2 MB: the 1 MiB bound evicted the oldest.
      expect(bytes).toBeGreaterThan(900_000);
      expect(bytes).toBeLessThanOrEqual(1_048_576);
    } finally {
      await own.close();
    }
  });
});
