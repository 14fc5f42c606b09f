// The fast path's access line (src/http/logging.ts createHitLogger): built by hand instead of
// through pino, it must be the line pino writes for the normal path (same fields, same JSON,
// never the key), in order with pino's own lines (lineBuffer).
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadDefaultConfig } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import pino from 'pino';
import { createHitLogger, lineBuffer, loggerOptions } from '../../src/http/logging.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { captureLines } from '../helpers/log-lines.ts';

const clock = Date.UTC(2025, 5, 18, 2, 15, 30);

/** An app at info writing JSON lines to `logStream`, listening on a free port. */
async function listeningApp(logStream: unknown, configure?: (config: Config) => void): Promise<{ app: FastifyInstance; base: string }> {
  const config = loadDefaultConfig();
  (config.log as { level: string }).level = 'info';
  const { app } = await buildTestApp({ now: () => clock, configure, logger: loggerOptions(config, { format: 'json', stream: logStream as never }) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, base: `http://127.0.0.1:${(app.server.address() as { port: number }).port}` };
}

/** With log.hits: lines (every hit at info; the default sums them: the describe below). Lines through a plain stream (the line is built as a string) or through lineBuffer (encoded in place, as in production). */
for (const through of ['a plain stream', 'lineBuffer'] as const) describe(`fast-path access line, through ${through}`, () => {
  const { stream, lines } = captureLines();
  const gathered = lineBuffer({ write: (chunk) => stream.write(chunk), flushSync: () => {} }, () => {}, 65_536, 60_000);
  let app: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    ({ app, base } = await listeningApp(through === 'lineBuffer' ? gathered : stream, (c) => { c.log.hits = 'lines'; }));
  });
  afterAll(() => app.close());

  const completed = () => {
    gathered.flush();
    return lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request completed');
  };

  it('writes the normal path line with fast_path: true, valid JSON, the key id and never the key', async () => {
    const path = '/v1/quotes?symbols=600519.SH&_=%22quoted%22';
    const first = await fetch(`${base}${path}`, { headers: { 'x-api-key': KEYS.demo, 'accept-encoding': 'identity' } });
    await first.arrayBuffer();
    const second = await fetch(`${base}${path}`, { headers: { 'x-api-key': KEYS.demo, 'accept-encoding': 'identity' } });
    await second.arrayBuffer();
    // The same hit through the normal path (inject never takes the fast path).
    const slowHit = await app.inject({ url: path, headers: { 'x-api-key': KEYS.demo } });
    expect(slowHit.headers['x-cache']).toBe('HIT');
    const done = completed();
    const normal = done.find((l) => l.reqId === slowHit.headers['x-request-id']);
    const fast = done.find((l) => l.reqId === second.headers.get('x-request-id'));
    expect(normal).toBeDefined();
    expect(fast).toMatchObject({
      level: 30, pid: process.pid, hostname: hostname(), req: { method: 'GET', url: path }, route: '/v1/quotes', status: 200,
      key_id: normal!.key_id, cache: normal!.cache, cache_tier: normal!.cache_tier, fast_path: true, msg: 'request completed',
    });
    expect(new Date(fast!.time as string).toISOString()).toBe(fast!.time);
    expect(typeof fast!.duration_ms).toBe('number');
    // Every field of the normal line is there (the normal path says upstream and symbols too).
    const expected = Object.keys(normal!).filter((k) => !['upstream', 'symbols'].includes(k)).sort();
    expect(Object.keys(fast!).filter((k) => k !== 'fast_path').sort()).toEqual(expected);
    expect(lines.join('\n')).not.toContain(KEYS.demo);
  });

  it('says nothing at warn', async () => {
    app.log.level = 'warn';
    try {
      const before = completed().length;
      const path = '/v1/quotes?symbols=000001.SZ';
      for (let i = 0; i < 2; i++) await (await fetch(`${base}${path}`, { headers: { 'x-api-key': KEYS.demo } })).arrayBuffer();
      expect(completed().length).toBe(before);
    } finally {
      app.log.level = 'info';
    }
  });
});

describe('fast-path hits summed (log.hits: summary, the default)', () => {
  const { stream, lines } = captureLines();
  const gathered = lineBuffer({ write: (chunk) => stream.write(chunk), flushSync: () => {} }, () => {}, 65_536, 60_000);
  let app: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    expect(loadDefaultConfig().log.hits).toBe('summary');
    ({ app, base } = await listeningApp(gathered));
  });
  afterAll(() => app.close());

  const parsed = () => {
    gathered.flush();
    return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  };
  const get = async (path: string, key: string, etag?: string) => {
    const response = await fetch(`${base}${path}`, { headers: { 'x-api-key': key, ...(etag === undefined ? {} : { 'if-none-match': etag }) } });
    await response.arrayBuffer();
    return response;
  };

  it('writes no line at info for a fast-path hit, each one at debug, and their counts by key, route and status in one info line per window', async () => {
    const quote = '/v1/quotes?symbols=600519.SH&_=%22summary%22';
    const first = await get(quote, KEYS.demo);
    const servedBefore = app.fastPathServed!();
    const hit = await get(quote, KEYS.demo);
    expect(app.fastPathServed!()).toBe(servedBefore + 1);
    const ids = (l: Record<string, unknown>) => l.reqId;
    // The miss is a request like any other: its line at info. The hit: none.
    const completed = parsed().filter((l) => l.msg === 'request completed');
    expect(completed.map(ids)).toContain(first.headers.get('x-request-id'));
    expect(completed.map(ids)).not.toContain(hit.headers.get('x-request-id'));

    // At debug the hit's line is there, at level 20 with the fields the info line has.
    app.log.level = 'debug';
    let debugHit: Response;
    try {
      debugHit = await get(quote, KEYS.demo);
    } finally {
      app.log.level = 'info';
    }
    const line = parsed().find((l) => l.reqId === debugHit.headers.get('x-request-id'));
    expect(line).toMatchObject({ level: 20, route: '/v1/quotes', status: 200, fast_path: true, cache: 'HIT', msg: 'request completed' });

    // Two more hits: a 304 for the demo key and one for the cn-daily key on another route.
    await get(quote, KEYS.demo, hit.headers.get('etag')!);
    const candles = '/v1/klines?symbol=600519.SH&period=1d&count=5';
    await get(candles, KEYS.cnDaily);
    await get(candles, KEYS.cnDaily);
    expect(app.fastPathServed!()).toBe(servedBefore + 4);
    expect(parsed().filter((l) => l.msg === 'cache hits')).toEqual([]);
    await app.close();
    const sums = parsed().filter((l) => l.msg === 'cache hits');
    expect(sums).toHaveLength(1);
    expect(sums[0]).toMatchObject({
      level: 30, fast_path: true, hits: 4, not_modified: 1,
      by_key: { demo: 3, 'cn-daily': 1 }, by_route: { '/v1/quotes': 3, '/v1/klines': 1 },
    });
    expect(lines.join('\n')).not.toContain(KEYS.demo);
  });
});

describe('fast-path access line encoded in place', () => {
  it('writes the same bytes as the string it stands for, for any duration, status, URL and key id', () => {
    const { stream: plain, lines: plainLines } = captureLines();
    const { stream: sink, lines: placedLines } = captureLines();
    const placed = lineBuffer({ write: (chunk) => sink.write(chunk), flushSync: () => {} }, () => {}, 200, 60_000);
    const fixed = { timestamp: () => ',"time":"2026-11-23T08:00:00.000Z"' };
    const asString = createHitLogger(pino({ level: 'info', ...fixed }, plain) as never);
    const inPlace = createHitLogger(pino({ level: 'info', ...fixed }, placed as never) as never);
    const route = {};
    const cases: Array<[string, number, string, number, string]> = [
      ['/v1/quotes?symbols=AAPL.US', 200, 'abc-1', 0, 'demo'],
      ['/v1/quotes?symbols=AAPL.US', 304, 'abc-2', 0.1, 'demo'],
      ['/v1/klines?symbol=600519.SH&count=1000', 200, 'client.id:7', 2.3, 'trader "desk" 1'],
      ['/v1/quotes?symbols=%E4%B8%AD&x=中', 200, 'z', 123_456.7, 'ключ'],
      ['/v1/quotes?symbols=AAPL.US', 200, 'q', 10, 'demo'],
    ];
    for (const [url, status, reqId, ms, keyId] of cases) {
      const memo = url === cases[0][0] ? route : {};
      asString(memo, url, '/v1/quotes', status, reqId, ms, keyId);
      inPlace(memo, url, '/v1/quotes', status, reqId, ms, keyId);
    }
    placed.flush();
    // Times differ only if the clock ticked between the two writes: compare without them.
    const untimed = (l: string) => l.replace(/"time":"[^"]+"/, '"time":""');
    expect(placedLines.map(untimed)).toEqual(plainLines.map(untimed));
    expect(placedLines.map((l) => (JSON.parse(l) as { duration_ms: number }).duration_ms)).toEqual([0, 0.1, 2.3, 123_456.7, 10]);
    expect(JSON.parse(placedLines[3]) as object).toMatchObject({ req: { url: '/v1/quotes?symbols=%E4%B8%AD&x=中' }, key_id: 'ключ' });
  });
});

describe('lineBuffer', () => {
  it('hands chunks of at least chunkBytes over as UTF-8 bytes, in order, and on flushSync writes the rest synchronously after what the destination holds', () => {
    const written: string[] = [];
    const events: string[] = [];
    const buffer = lineBuffer(
      { write: (chunk) => (written.push(chunk.toString('utf8')), true), flushSync: () => { events.push('destination flushSync'); } },
      (chunk) => { events.push(`writeSync ${chunk.toString('utf8')}`); },
      10,
      60_000,
    );
    buffer.write('abcd\n');
    expect(written).toEqual([]);
    buffer.write('éfghij\n');
    expect(written).toEqual(['abcd\néfghij\n']);
    buffer.write('k\n');
    buffer.flushSync();
    // The exit path never starts an asynchronous write (an exiting process would lose it).
    expect(written).toEqual(['abcd\néfghij\n']);
    expect(events).toEqual(['destination flushSync', 'writeSync k\n']);
    buffer.flush();
    expect(written.length).toBe(1);
  });

  it('keeps every byte and the order when a line is longer than its buffer, and when chunks were handed over before', () => {
    const written: Buffer[] = [];
    const buffer = lineBuffer({ write: (chunk) => (written.push(Buffer.from(chunk)), true), flushSync: () => {} }, () => {}, 64, 60_000);
    const lines = ['a'.repeat(30), '中'.repeat(20_000), 'b'.repeat(50), '€'.repeat(40), 'end'].map((l) => `${l}\n`);
    for (const line of lines) buffer.write(line);
    buffer.flush();
    expect(Buffer.concat(written).toString('utf8')).toBe(lines.join(''));
    // The 60,000-byte line went over on its own, after what was gathered before it.
    expect(written.map((b) => b.length)).toContain(60_001);
  });
  it('reuses a chunk Buffer only once the destination says its bytes were written (sonic-boom\'s write event)', async () => {
    // A destination that writes later, in pieces, as fs.write may: it copies what it writes out
    // only when it writes, so a Buffer reused too early would show up as corrupted output.
    let onWrite: ((n: number) => void) | undefined;
    const queue: Buffer[] = [];
    const out: Buffer[] = [];
    const allocated = new Set<ArrayBufferLike>();
    const writeSome = (limit: number) => {
      const next = queue[0];
      if (next === undefined) return;
      const n = Math.min(next.length, limit);
      out.push(Buffer.from(next.subarray(0, n)));
      if (n === next.length) queue.shift();
      else queue[0] = next.subarray(n);
      onWrite?.(n);
    };
    let handedOver = 0;
    const buffer = lineBuffer({
      write: (chunk) => (handedOver++, allocated.add(chunk.buffer), queue.push(chunk), true),
      flushSync: () => {},
      on: (_event, listener) => (onWrite = listener),
    }, () => {}, 256, 60_000);
    const lines = Array.from({ length: 3300 }, (_, i) => `line ${i} ${'x'.repeat(i % 37)}\n`);
    for (const [i, line] of lines.entries()) {
      buffer.write(line);
      // First a backlog of ~30 chunks, then a writer faster than the lines, in 60-byte pieces.
      if (i >= 300) writeSome(60);
    }
    buffer.flush();
    while (queue.length > 0) writeSome(1000);
    expect(Buffer.concat(out).toString()).toBe(lines.join(''));
    // Buffers were reused: far fewer distinct ones than chunks handed over.
    expect(handedOver).toBeGreaterThan(300);
    expect(allocated.size).toBeLessThan(handedOver / 4);
  });
});

