// The fast path's access line (src/http/logging.ts createHitLogger): built by hand instead of
// through pino, it must be the line pino writes for the normal path (same fields, same JSON,
// never the key), in order with pino's own lines (lineBuffer).
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadDefaultConfig } from '../../config/load.ts';
import { lineBuffer, loggerOptions } from '../../src/http/logging.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { captureLines } from '../helpers/log-lines.ts';

const { stream, lines } = captureLines();

let app: FastifyInstance;
let base: string;
const clock = Date.UTC(2025, 5, 18, 2, 15, 30);

beforeAll(async () => {
  const config = loadDefaultConfig();
  (config.log as { level: string }).level = 'info';
  ({ app } = await buildTestApp({ now: () => clock, logger: loggerOptions(config, { format: 'json', stream }) }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
});
afterAll(() => app.close());

const completed = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request completed');

describe('fast-path access line', () => {
  it('writes the normal path line with fast_path: true, valid JSON, the key id and never the key', async () => {
    const path = '/v1/quotes?symbols=600519.SH&fields=%22quoted%22';
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
});
