// Issue 29 (metrics exposure): /metrics names every key id and its traffic. Default: the API port,
// loopback clients only (403 JSON to others); metrics.token lets others in with a bearer token;
// metrics.port gives it an own listener (and takes it off the API port).
import { networkInterfaces } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { loadDefaultConfig } from '../../config/load.ts';
import { loggerOptions } from '../../src/http/logging.ts';
import { isLoopback } from '../../src/http/metrics-exposure.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { captureLines } from '../helpers/log-lines.ts';
import type { Config } from '../../config/schema.ts';

const REMOTE = '203.0.113.7';
const TOKEN = 'metrics-s3cret-token';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function build(metrics?: Config['metrics'], extra: (config: Config) => void = () => undefined) {
  const { stream, lines } = captureLines();
  ({ app } = await buildTestApp({
    logger: loggerOptions(loadDefaultConfig(), { format: 'json', stream }),
    configure: (config) => {
      if (metrics !== undefined) config.metrics = metrics;
      extra(config);
    },
  }));
  return { app: app!, lines };
}

function expectRefused(res: { statusCode: number; headers: Record<string, unknown>; body: string }) {
  expect(res.statusCode).toBe(403);
  expect(String(res.headers['content-type'])).toContain('application/json');
  const body = JSON.parse(res.body) as Record<string, unknown>;
  expect(body).toMatchObject({ code: 403, error: 'NO_METRICS_PERMISSION' });
  expect(res.body).not.toContain('mdqs_');
  return body;
}

describe('default: /metrics on the API port, loopback clients only', () => {
  it('the default config has no token and no own listener', () => {
    expect(loadDefaultConfig().metrics).toEqual({ token: '', host: '' });
  });

  it('serves loopback (tests and local use unchanged), refuses any other address with a 403 JSON error', async () => {
    const { app } = await build();
    await app.inject({ url: '/v1/quotes?symbols=600519.SH', headers: { 'x-api-key': KEYS.demo } });
    for (const remoteAddress of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
      const res = await app.inject({ url: '/metrics', remoteAddress });
      expect(res.statusCode, remoteAddress).toBe(200);
      expect(res.body).toContain('mdqs_key_requests_total{key_id="demo"}');
    }
    const body = expectRefused(await app.inject({ url: '/metrics', remoteAddress: REMOTE }));
    expect(body.message).toContain('metrics.token');
    // No token configured: a bearer header opens nothing.
    expectRefused(await app.inject({ url: '/metrics', remoteAddress: REMOTE, headers: { authorization: 'Bearer anything' } }));
  });

  it('behind a proxy (trustProxy) the client address decides, not the proxy on loopback', async () => {
    const { app } = await build(undefined, (config) => { config.server.trustProxy = true; });
    expectRefused(await app.inject({ url: '/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': REMOTE } }));
    expect((await app.inject({ url: '/metrics', remoteAddress: '127.0.0.1' })).statusCode).toBe(200);
  });

  it('on a real socket bound beyond loopback, a client on a non-loopback address is refused', async () => {
    const address = Object.values(networkInterfaces()).flat().find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;
    if (address === undefined) return; // a machine with loopback only: nothing to reach it from
    const { app } = await build();
    await app.listen({ host: '0.0.0.0', port: 0 });
    const port = (app.server.address() as { port: number }).port;
    const remote = await fetch(`http://${address}:${port}/metrics`);
    expect(remote.status).toBe(403);
    expect((await remote.json() as { error: string }).error).toBe('NO_METRICS_PERMISSION');
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
  });
});

describe('metrics.token', () => {
  it('a client beyond loopback with the bearer token is served; a wrong or missing token is 403', async () => {
    const { app } = await build({ token: TOKEN, host: '' });
    const ok = await app.inject({ url: '/metrics', remoteAddress: REMOTE, headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('mdqs_http_requests_total');
    expect(expectRefused(await app.inject({ url: '/metrics', remoteAddress: REMOTE, headers: { authorization: 'Bearer wrong' } })).message).toBe('the metrics token is not valid');
    expect(expectRefused(await app.inject({ url: '/metrics', remoteAddress: REMOTE })).message).toContain('Authorization: Bearer');
    // Loopback needs no token; a wrong one is refused there too.
    expect((await app.inject({ url: '/metrics' })).statusCode).toBe(200);
    expectRefused(await app.inject({ url: '/metrics', headers: { authorization: 'Bearer wrong' } }));
  });

  it('is masked by check-config (a secret)', async () => {
    const { maskSecrets } = await import('../../src/cli/mask.ts');
    expect((maskSecrets({ metrics: { token: TOKEN } }) as { metrics: { token: string } }).metrics.token).toBe('***');
  });
});

describe('metrics.port: an own listener', () => {
  async function listening(metrics: Config['metrics']) {
    const built = await build(metrics);
    await built.app.listen({ host: '127.0.0.1', port: 0 });
    for (let i = 0; i < 100 && !built.lines.some((l) => l.includes('metrics listening at')); i++) await new Promise((r) => setTimeout(r, 10));
    const line = JSON.parse(built.lines.find((l) => l.includes('metrics listening at'))!) as { msg: string; port: number };
    const api = (built.app.server.address() as { port: number }).port;
    return { ...built, api, own: line.port, line };
  }

  it('serves /metrics on port 0 (a free port) and leaves the API port; app.close() releases it', async () => {
    const { app, api, own, line } = await listening({ token: '', port: 0, host: '127.0.0.1' });
    expect(line.msg).toBe(`metrics listening at http://127.0.0.1:${own}/metrics`);
    expect(own).not.toBe(api);
    const res = await fetch(`http://127.0.0.1:${own}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(await res.text()).toContain('mdqs_http_requests_total');
    const other = await fetch(`http://127.0.0.1:${own}/v1/quotes`);
    expect(other.status).toBe(404);
    expect((await other.json() as { error: string }).error).toBe('NOT_FOUND');
    const onApi = await fetch(`http://127.0.0.1:${api}/metrics`);
    expect(onApi.status).toBe(404);
    expect((await onApi.json() as { message: string }).message).toContain('metrics.port');
    await app.close();
    await expect(fetch(`http://127.0.0.1:${own}/metrics`)).rejects.toThrow();
  });

  it('with a token too, the own listener asks it of clients beyond loopback and serves loopback', async () => {
    const { own } = await listening({ token: TOKEN, port: 0, host: '127.0.0.1' });
    expect((await fetch(`http://127.0.0.1:${own}/metrics`)).status).toBe(200);
    const wrong = await fetch(`http://127.0.0.1:${own}/metrics`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(403);
    expect((await wrong.json() as { error: string }).error).toBe('NO_METRICS_PERMISSION');
    expect((await fetch(`http://127.0.0.1:${own}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it('a port in use is logged as an error naming it; the API keeps serving', async () => {
    const { createServer } = await import('node:net');
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as { port: number }).port;
    try {
      const { app, lines } = await build({ token: '', port: taken, host: '127.0.0.1' });
      await app.listen({ host: '127.0.0.1', port: 0 });
      for (let i = 0; i < 100 && !lines.some((l) => l.includes('cannot listen for metrics')); i++) await new Promise((r) => setTimeout(r, 10));
      const line = JSON.parse(lines.find((l) => l.includes('cannot listen for metrics'))!) as { level: number; msg: string };
      expect(line.level).toBe(50);
      expect(line.msg).toBe(`cannot listen for metrics: port ${taken} on 127.0.0.1 is already in use; /metrics is not served (choose another metrics.port)`);
      expect((await fetch(`http://127.0.0.1:${(app.server.address() as { port: number }).port}/healthz`)).status).toBe(200);
    } finally {
      holder.close();
    }
  });
});

describe('isLoopback', () => {
  it('knows 127/8, ::1 and IPv4-mapped loopback', () => {
    expect(['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1'].every(isLoopback)).toBe(true);
    expect(['10.0.0.1', '::ffff:10.0.0.1', '203.0.113.7', '::2', '1127.0.0.1', undefined].some((a) => isLoopback(a))).toBe(false);
  });
});
