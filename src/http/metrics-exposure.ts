// Who may read /metrics (issue 29). The Prometheus text names every key id and its traffic, so it
// is not for whoever can reach the API. Two conventions, either or both:
//   - metrics.token: a client beyond loopback sends `Authorization: Bearer <token>`;
//   - metrics.port (+ metrics.host): an own listener for /metrics, which then leaves the API port
//     (firewall that port, or set a token too).
// Default (neither): /metrics on the API port for loopback clients only: a service listening on
// 127.0.0.1 (the demo default) is unchanged, one on 0.0.0.0 refuses everyone else with 403
// NO_METRICS_PERMISSION. The client address is request.ip (behind a proxy with server.trustProxy,
// X-Forwarded-For: a proxy on the same machine does not make every client loopback).
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Config } from '../../config/schema.ts';
import { AppError } from '../errors.ts';
import { errorBody } from './error-handler.ts';

export interface MetricsExposure {
  /** Bearer token; '' for none. */
  token: string;
  /** Own listener's port; undefined: /metrics on the API port. */
  port?: number;
  /** Own listener's address; '' for the API's. */
  host: string;
}

export function metricsExposure(config: Pick<Config, 'metrics'>): MetricsExposure {
  const m = config.metrics;
  return { token: m?.token ?? '', port: m?.port, host: m?.host ?? '' };
}

/** 127.0.0.0/8, ::1, and IPv4-mapped 127.x (a dual-stack socket's view of an IPv4 loopback peer). */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * The refusal for a /metrics request, or undefined to serve it. A token presented is checked
 * (constant time) wherever the client is; without one, loopback clients are served, and others
 * only on an own listener that has no token configured (`openWithoutToken`).
 */
export function metricsRefusal(exposure: MetricsExposure, authorization: string | undefined, address: string | undefined, openWithoutToken = false): AppError | undefined {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (presented !== undefined && exposure.token !== '') {
    if (timingSafeEqual(digest(presented), digest(exposure.token))) return undefined;
    return new AppError('NO_METRICS_PERMISSION', 'the metrics token is not valid');
  }
  if (isLoopback(address)) return undefined;
  if (openWithoutToken && exposure.token === '') return undefined;
  return new AppError('NO_METRICS_PERMISSION', exposure.token === ''
    ? '/metrics is served to loopback clients only: set metrics.token and send Authorization: Bearer <token>, or give metrics its own listener (metrics.port)'
    : '/metrics needs Authorization: Bearer <metrics.token> from beyond loopback');
}

export interface MetricsRouteOptions {
  registry: Registry;
  config: Pick<Config, 'metrics'>;
}

/**
 * GET /metrics on the API port (or, with metrics.port, a 404 there naming the own listener, which
 * starts when the API listens and stops when the app closes).
 */
export function registerMetrics(app: FastifyInstance, options: MetricsRouteOptions): void {
  const exposure = metricsExposure(options.config);
  const { registry } = options;
  const route = { config: { public: true, rateLimit: false }, schema: { hide: true } } as const;
  if (exposure.port === undefined) {
    app.get('/metrics', route, async (request, reply) => {
      const refusal = metricsRefusal(exposure, request.headers.authorization, request.ip);
      if (refusal !== undefined) throw refusal;
      return reply.header('content-type', registry.contentType).header('cache-control', 'no-store').send(await registry.metrics());
    });
    return;
  }
  app.get('/metrics', route, async () => {
    throw new AppError('NOT_FOUND', 'no route GET /metrics on this port: metrics are served on their own listener (metrics.port)');
  });
  let server: Server | undefined;
  app.addHook('onListen', async () => {
    const api = app.server.address() as AddressInfo | null;
    const host = exposure.host || api?.address || '127.0.0.1';
    const own = createServer((req, res) => void serveOwn(exposure, registry, req, res));
    try {
      await new Promise<void>((resolve, reject) => {
        own.once('error', reject);
        own.listen(exposure.port, host, () => {
          own.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      app.log.error({ host, port: exposure.port, code }, code === 'EADDRINUSE'
        ? `cannot listen for metrics: port ${exposure.port} on ${host} is already in use; /metrics is not served (choose another metrics.port)`
        : `cannot listen for metrics on ${host}:${exposure.port}: ${(error as Error).message}; /metrics is not served`);
      return;
    }
    server = own;
    const bound = own.address() as AddressInfo;
    const shown = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
    app.log.info({ host: bound.address, port: bound.port }, `metrics listening at http://${shown}:${bound.port}/metrics`);
  });
  app.addHook('onClose', async () => {
    const own = server;
    if (own === undefined) return;
    server = undefined;
    own.closeAllConnections();
    await new Promise<void>((resolve) => own.close(() => resolve()));
  });
}

function sendJson(res: ServerResponse, error: AppError): void {
  const body = JSON.stringify(errorBody(error, randomUUID()));
  res.writeHead(error.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(body);
}

async function serveOwn(exposure: MetricsExposure, registry: Registry, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return sendJson(res, new AppError('NOT_FOUND', `no route ${req.method ?? 'GET'} ${path}: this listener serves GET /metrics`));
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, new AppError('METHOD_NOT_ALLOWED', 'only GET /metrics'));
    const refusal = metricsRefusal(exposure, req.headers.authorization, req.socket.remoteAddress, true);
    if (refusal !== undefined) return sendJson(res, refusal);
    const text = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : text);
  } catch {
    if (!res.headersSent) sendJson(res, new AppError('INTERNAL_ERROR', 'internal error'));
    else res.destroy();
  }
}
