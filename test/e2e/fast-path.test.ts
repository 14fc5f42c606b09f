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

/** `fast`: the fast path answered it (the app counts what it serves; both paths share request ids). */
async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string>; body: Buffer; fast: boolean }> {
  const before = app.fastPathServed?.() ?? 0;
  const res = await fetch(`${base}${path}`, { headers: { 'accept-encoding': 'identity', ...headers } });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: Object.fromEntries(res.headers), body, fast: (app.fastPathServed?.() ?? 0) > before };
}

const fast = (answer: { fast: boolean }) => answer.fast;

describe('cache-hit fast path', () => {
  it('serves the second identical request with the same bytes and headers as the normal path would', async () => {
    const path = '/v1/quotes?symbols=600519.SH,00700.HK,NOPE.US';
    const first = await get(path, { 'x-api-key': KEYS.demo });
    expect(first.status).toBe(200);
    expect(first.headers['x-cache']).toBe('MISS');
    expect(fast(first)).toBe(false);
    const second = await get(path, { 'x-api-key': KEYS.demo });
    expect(fast(second)).toBe(true);
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
    expect(fast(query)).toBe(false);
  });

  it('counts hits against the rate limit and leaves the 429 to the normal path', async () => {
    const path = '/v1/quotes?symbols=600000.SH';
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await get(path, { 'x-api-key': KEYS.tiny }));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429, 429]);
    expect(answers.slice(1, 3).every((a) => fast(a))).toBe(true);
    expect(answers.map((a) => a.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0', '0']);
    expect(JSON.parse(answers[3].body.toString())).toMatchObject({ code: 429, error: 'RATE_LIMITED' });
  });

  it('answers If-None-Match with 304 and serves the gzip variant once the normal path built it', async () => {
    const path = '/v1/klines?symbol=600519.SH&period=1d&count=300&adjust=none';
    const first = await get(path, { 'x-api-key': KEYS.demo });
    const etag = first.headers.etag;
    const revalidated = await get(path, { 'x-api-key': KEYS.demo, 'if-none-match': etag });
    expect(revalidated.status).toBe(304);
    expect(fast(revalidated)).toBe(true);
    expect(revalidated.body.length).toBe(0);
    const gz1 = await get(path, { 'x-api-key': KEYS.demo, 'accept-encoding': 'gzip' });
    expect(gz1.headers['content-encoding']).toBe('gzip');
    expect(fast(gz1)).toBe(false);
    const gz2 = await get(path, { 'x-api-key': KEYS.demo, 'accept-encoding': 'gzip' });
    expect(fast(gz2)).toBe(true);
    expect(gz2.headers['content-encoding']).toBe('gzip');
    expect(gz2.headers.etag).toBe(gz1.headers.etag);
    expect(gz2.body.equals(gz1.body)).toBe(true);
  });

  it('leaves a request without Host to the normal path, which answers 400 with the error body', async () => {
    const path = '/v1/quotes?symbols=600036.SH';
    await get(path, { 'x-api-key': KEYS.demo });
    expect(fast(await get(path, { 'x-api-key': KEYS.demo }))).toBe(true);
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
    expect(fast(await get(path, { 'x-api-key': KEYS.demo }))).toBe(true);
    clock += 3_000;
    const later = await get(path, { 'x-api-key': KEYS.demo });
    expect(fast(later)).toBe(false);
    expect(later.headers['x-cache']).not.toBe('HIT');
  });
});

/** Writes `text` on one connection and reads until `responses` complete responses arrived (or the server closed). */
function exchange(text: string, responses: number, endAfter = false): Promise<{ raw: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(base).port), '127.0.0.1', () => socket.write(text));
    let raw = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ raw, closed });
    };
    const complete = () => {
      let count = 0;
      for (let at = 0; ;) {
        const head = raw.indexOf('\r\n\r\n', at);
        if (head < 0) break;
        const length = Number(/content-length: (\d+)/i.exec(raw.slice(at, head))?.[1] ?? 0);
        if (raw.length < head + 4 + length) break;
        count++;
        at = head + 4 + length;
      }
      return count;
    };
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      raw += chunk;
      // Wait a moment for a close that follows the last response (Connection: close).
      if (complete() >= responses) setTimeout(() => finish(false), endAfter ? 200 : 0);
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', reject);
  });
}

describe('fast-path prebuilt header block (wire level)', () => {
  const path = '/v1/quotes?symbols=300750.SZ';
  const request = (extra = '', version = '1.1') => `GET ${path} HTTP/${version}\r\nHost: x\r\nX-API-Key: ${KEYS.demo}\r\n${extra}\r\n`;

  it('answers pipelined keep-alive hits in order, with the Date, Connection and Keep-Alive lines node:http writes', async () => {
    await get(path, { 'x-api-key': KEYS.demo });
    const { raw, closed } = await exchange(request('X-Request-Id: one\r\n') + request('X-Request-Id: two\r\n') + request('X-Request-Id: three\r\n'), 3);
    expect(closed).toBe(false);
    const heads = raw.split(/\r\n\r\n\{[^]*?\}(?=HTTP\/|$)/).filter((h) => h.startsWith('HTTP/'));
    expect(heads.map((h) => /x-request-id: (\S+)/.exec(h)?.[1])).toEqual(['one', 'two', 'three']);
    for (const head of heads) {
      expect(head.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
      expect(head).toMatch(/\r\nDate: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT\r\n/);
      expect(head).toContain('\r\nConnection: keep-alive\r\nKeep-Alive: timeout=72');
      expect(head).toContain('x-cache: HIT');
      // Each header once.
      const names = head.split('\r\n').slice(1).map((line) => line.split(':')[0].toLowerCase());
      expect(new Set(names).size).toBe(names.length);
    }
    // The bodies are the cached bytes, as long as content-length says.
    const body = (await get(path, { 'x-api-key': KEYS.demo })).body.toString('latin1');
    expect(raw.split(body).length - 1).toBe(3);
  });

  it('closes after the answer when the client asks (Connection: close) or speaks HTTP/1.0, as node:http does', async () => {
    await get(path, { 'x-api-key': KEYS.demo });
    const close = await exchange(request('Connection: close\r\n'), 1, true);
    expect(close.raw.startsWith('HTTP/1.1 200 OK')).toBe(true);
    expect(close.raw).toContain('x-cache: HIT');
    expect(close.raw).toMatch(/\r\nConnection: close\r\n/i);
    expect(close.closed).toBe(true);
    const old = await exchange(request('', '1.0'), 1, true);
    expect(old.raw).toContain('x-cache: HIT');
    expect(old.raw).not.toMatch(/keep-alive/i);
    expect(old.closed).toBe(true);
  });

  it('keeps the connection after a 304 and answers the next request on it', async () => {
    const first = await get(path, { 'x-api-key': KEYS.demo });
    const { raw, closed } = await exchange(request(`If-None-Match: ${first.headers.etag}\r\n`) + request(), 2);
    expect(closed).toBe(false);
    expect(raw.startsWith('HTTP/1.1 304 Not Modified\r\n')).toBe(true);
    const [notModified] = raw.split('\r\n\r\n');
    expect(notModified).toContain('Connection: keep-alive');
    expect(notModified).not.toMatch(/content-length/i);
    expect(raw.indexOf('HTTP/1.1 200 OK')).toBeGreaterThan(0);
  });
});

describe('fast-path socket writes', () => {
  /** The socket writes of the next connection's answers: `write` one buffer, `writev` several chunks. */
  function watchWrites(): { writes: Array<{ kind: 'write' | 'writev'; chunks: Buffer[] }>; stop(): void } {
    const writes: Array<{ kind: 'write' | 'writev'; chunks: Buffer[] }> = [];
    const onConnection = (socket: import('node:net').Socket & { _write: Function; _writev: Function }) => {
      const write = socket._write.bind(socket);
      const writev = socket._writev.bind(socket);
      const bytes = (chunk: unknown, encoding?: string) => (Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), (encoding ?? 'latin1') as BufferEncoding));
      socket._write = (chunk: unknown, encoding: string, cb: unknown) => {
        writes.push({ kind: 'write', chunks: [bytes(chunk, encoding)] });
        return write(chunk, encoding, cb);
      };
      socket._writev = (chunks: Array<{ chunk: unknown; encoding: string }>, cb: unknown) => {
        writes.push({ kind: 'writev', chunks: chunks.map((c) => bytes(c.chunk, c.encoding)) });
        return writev(chunks, cb);
      };
    };
    app.server.on('connection', onConnection);
    return { writes, stop: () => app.server.off('connection', onConnection) };
  }

  it('sends a small hit as one write of header and body joined, a large one as header and body (writev)', async () => {
    const small = '/v1/quotes?symbols=601318.SH';
    const large = '/v1/klines?symbol=601318.SH&period=1d&count=1000&adjust=none';
    const smallBody = (await get(small, { 'x-api-key': KEYS.demo })).body;
    const largeBody = (await get(large, { 'x-api-key': KEYS.demo })).body;
    expect(smallBody.length).toBeLessThan(16_384);
    expect(largeBody.length).toBeGreaterThan(16_384);
    const request = (url: string) => `GET ${url} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEYS.demo}\r\n\r\n`;

    const served = () => app.fastPathServed?.() ?? 0;
    const before = served();
    const watchSmall = watchWrites();
    const { raw } = await exchange(request(small), 1);
    watchSmall.stop();
    expect(watchSmall.writes).toHaveLength(1);
    const [joined] = watchSmall.writes;
    expect(joined.kind).toBe('write');
    const text = joined.chunks[0].toString('latin1');
    expect(text.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
    expect(text).toContain('x-cache: HIT');
    expect(joined.chunks[0].subarray(joined.chunks[0].length - smallBody.length).equals(smallBody)).toBe(true);
    expect(text).toBe(raw);
    expect(Number(/content-length: (\d+)/.exec(text)?.[1])).toBe(smallBody.length);

    const watchLarge = watchWrites();
    await exchange(request(large), 1);
    watchLarge.stop();
    // Both answered by the fast path (the normal path writes two chunks too).
    expect(served()).toBe(before + 2);
    expect(watchLarge.writes.map((w) => w.kind)).toEqual(['writev']);
    const [head, body] = watchLarge.writes[0].chunks;
    expect(head.toString('latin1')).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*x-cache: HIT[^]*\r\n\r\n$/);
    expect(body.equals(largeBody)).toBe(true);
  });
});

describe('fast-path URL index', () => {
  it('is bounded by bytes (an eighth of the response cache, at least 1 MiB), reported in /metrics', async () => {
    const { app: own } = await buildTestApp({ configure: (config) => { config.cache.responseMaxBytes = 4 * 1_048_576; } });
    try {
      // Long distinct URLs (the cache buster `_` pads them), each a different answer stored by the
      // normal path and recorded in the index.
      const pad = 'x'.repeat(1_500);
      for (let i = 0; i < 600; i++) {
        const res = await own.inject({ url: `/v1/klines?symbol=600519.SH&period=1d&count=${i + 1}&_=${pad}`, headers: { 'x-api-key': KEYS.demo } });
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
