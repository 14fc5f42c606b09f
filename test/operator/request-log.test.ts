// Issue 13.2: one info line per request with the fields an operator needs, JSON or pretty, ISO
// timestamps, never the key; per-key usage counters with bounded labels (src/http/logging.ts).
import Fastify, { type FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { loadDefaultConfig } from '../../config/load.ts';
import type { KeyEntry } from '../../src/access/keys.ts';
import { captureLines } from '../helpers/log-lines.ts';
import { logFormat, loggerOptions, OneLineLogController, registerRequestLog, requestId, type LogFormat } from '../../src/http/logging.ts';

const SECRET = 'sk-live-Q7pZ3x';


let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function build(format: LogFormat, maxKeyLabels?: number, level = 'info') {
  const { stream, lines } = captureLines();
  const registry = new Registry();
  const config = loadDefaultConfig();
  (config.log as { level: string }).level = level;
  app = Fastify({ logger: loggerOptions(config, { format, stream }), logController: new OneLineLogController(), genReqId: requestId });
  // Stands in for the access plugin: the key id of an authenticated request.
  app.addHook('onRequest', async (request) => {
    const id = request.headers['x-test-key-id'];
    if (typeof id === 'string') request.keyEntry = { id } as KeyEntry;
  });
  registerRequestLog(app, { registry, maxKeyLabels });
  app.get('/v1/quotes', async (_request, reply) => {
    reply.header('x-cache', 'HIT').header('x-cache-tier', 'memory').header('x-upstream', 'sim, yahoo');
    return { data: [] };
  });
  app.post('/v1/quotes', async (_request, reply) => {
    reply.header('x-cache', 'MISS').header('x-upstream', 'sim');
    return { data: [] };
  });
  app.get('/v1/klines', async () => ({ data: {} }));
  app.get('/boom', async () => {
    throw new Error('kaput');
  });
  app.get('/limited', async (_request, reply) => reply.code(429).send({ error: 'RATE_LIMITED' }));
  await app.ready();
  return { app, lines, registry };
}

describe('the request log line (JSON)', () => {
  it('one line per request with id, method, route, status, duration, key id, cache, tier, upstreams, symbols; no key', async () => {
    const { app, lines } = await build('json');
    const res = await app.inject({
      method: 'GET',
      url: `/v1/quotes?symbols=600519.SH,AAPL.US&%61pi_key=${SECRET}`,
      headers: { 'x-request-id': 'req-42', 'x-test-key-id': 'research' },
    });
    expect(res.statusCode).toBe(200);
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]);
    expect(line.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(typeof line.duration_ms).toBe('number');
    const { time: _time, pid: _pid, hostname: _hostname, duration_ms: _duration, ...rest } = line;
    expect(rest).toEqual({
      level: 30,
      reqId: 'req-42',
      msg: 'request completed',
      req: { method: 'GET', url: '/v1/quotes?symbols=600519.SH,AAPL.US&%61pi_key=[redacted]' },
      route: '/v1/quotes',
      status: 200,
      key_id: 'research',
      cache: 'HIT',
      cache_tier: 'memory',
      upstream: ['sim', 'yahoo'],
      symbols: 2,
    });
    expect(lines[0]).not.toContain(SECRET);
  });

  it('a POST counts the body symbols; a single-symbol route counts 1; an unrouted request has route null', async () => {
    const { app, lines } = await build('json');
    await app.inject({ method: 'POST', url: '/v1/quotes', payload: { symbols: ['A.US', 'B.US', 'C.US'] } });
    await app.inject({ method: 'GET', url: '/v1/klines?symbol=600519.SH' });
    await app.inject({ method: 'GET', url: '/nope' });
    const parsed = lines.map((l) => JSON.parse(l));
    expect(parsed.map((l) => [l.req.method, l.route, l.status, l.symbols, l.cache, l.upstream, l.key_id])).toEqual([
      ['POST', '/v1/quotes', 200, 3, 'MISS', ['sim'], undefined],
      ['GET', '/v1/klines', 200, 1, undefined, undefined, undefined],
      ['GET', null, 404, undefined, undefined, undefined, undefined],
    ]);
  });
});

describe('OneLineLogController', () => {
  it("keeps Fastify's error lines and its incoming line at debug only", async () => {
    const { app, lines } = await build('json', undefined, 'debug');
    await app.inject({ method: 'GET', url: '/boom' });
    const msgs = lines.map((l) => JSON.parse(l)).map((l) => [l.level, l.msg]);
    expect(msgs).toEqual([[20, 'incoming request'], [50, 'kaput'], [30, 'request completed']]);
  });
});

describe('the pretty form', () => {
  it('is one coloured line a person can read', async () => {
    const { app, lines } = await build('pretty');
    await app.inject({ method: 'GET', url: '/v1/quotes?symbols=600519.SH', headers: { 'x-request-id': 'req-7', 'x-test-key-id': 'research' } });
    const text = lines.join('\n');
    expect(text).toMatch(/\x1b\[/); // ANSI colours
    // eslint-disable-next-line no-control-regex
    const plain = text.replace(/\x1b\[[0-9;]*m/g, '');
    expect(plain).toMatch(/^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\] INFO: GET \/v1\/quotes 200 [\d.]+ms key=research cache=HIT\/memory upstream=sim,yahoo symbols=1 req-7$/);
  });

  it('LOG_FORMAT wins; otherwise pretty on a terminal and JSON when piped', () => {
    expect(logFormat({ LOG_FORMAT: 'pretty' }, false)).toBe('pretty');
    expect(logFormat({ LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(logFormat({}, true)).toBe('pretty');
    expect(logFormat({}, false)).toBe('json');
  });
});

describe('per-key usage in /metrics', () => {
  it('counts requests and 429s by key id, with an "other" bucket past the label bound', async () => {
    const { app, registry } = await build('json', 2);
    for (const id of ['alpha', 'alpha', 'beta', 'gamma', 'delta']) await app.inject({ method: 'GET', url: '/v1/klines?symbol=A.US', headers: { 'x-test-key-id': id } });
    await app.inject({ method: 'GET', url: '/limited', headers: { 'x-test-key-id': 'alpha' } });
    await app.inject({ method: 'GET', url: '/limited', headers: { 'x-test-key-id': 'gamma' } });
    await app.inject({ method: 'GET', url: '/limited' });
    const text = await registry.metrics();
    const samples = text.split('\n').filter((l) => l.startsWith('mdqs_key_'));
    expect(samples).toEqual([
      'mdqs_key_requests_total{key_id="alpha"} 3',
      'mdqs_key_requests_total{key_id="beta"} 1',
      'mdqs_key_requests_total{key_id="other"} 3',
      'mdqs_key_requests_total{key_id="none"} 1',
      'mdqs_key_rate_limited_total{key_id="alpha"} 1',
      'mdqs_key_rate_limited_total{key_id="other"} 1',
      'mdqs_key_rate_limited_total{key_id="none"} 1',
    ]);
  });
});
