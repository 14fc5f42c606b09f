// One cache hit driven in-process, without the network (bench/diagnostics/hit-cost.ts,
// hit-instructions.ts): the service built from the default config with the bench key, its request
// listener (fast path included) and a bare listener writing the very bytes the service sent, both
// driven with node:http's own IncomingMessage and ServerResponse over a socket that discards what
// it is given.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { IncomingMessage, ServerResponse, type RequestListener } from 'node:http';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../config/load.ts';
import { KeyStore } from '../../src/access/keys.ts';
import { buildApp } from '../../src/app.ts';
import { createMetrics, upstreamSink } from '../../src/metrics.ts';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';
import { BENCH_KEY, benchKeysYaml } from './bench-keys.ts';

/** A connected-looking socket that swallows writes and remembers them while `keep` is set. */
class SinkSocket extends Socket {
  last = '';
  keep = false;
  constructor() {
    super();
    Object.defineProperty(this, 'remoteAddress', { value: '127.0.0.1' });
  }
  override write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    if (this.keep) this.last += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('latin1');
    const cb = typeof encoding === 'function' ? encoding : callback;
    if (typeof cb === 'function') (cb as () => void)();
    return true;
  }
  override cork(): void {}
  override uncork(): void {}
}

export interface InProcessHit {
  app: FastifyInstance;
  service: RequestListener;
  /** Writes the status, headers and body the service sent for one hit. */
  bare: RequestListener;
  /** One GET of `path` through `listener`. */
  drive(listener: RequestListener): void;
  /** What the service sent for one hit (headers and body). */
  captured: string;
  close(): Promise<void>;
}

export async function inProcessHit(path: string): Promise<InProcessHit> {
  const dir = mkdtempSync(join(tmpdir(), 'mdqs-in-process-hit-'));
  const keysFile = join(dir, 'keys.yaml');
  // A one-hour window: the in-process rounds send more hits in a minute than the default limit.
  writeFileSync(keysFile, benchKeysYaml({ windowMs: 3_600_000 }));
  const { config } = loadConfig({ LOG_LEVEL: 'info', ...process.env, KEYS_FILE: keysFile, MDQS__history__enabled: 'false', HOST: '127.0.0.1', PORT: '0' });
  const metrics = createMetrics({ processMetrics: true });
  const deps = productionDeps(Date.now, upstreamSink(metrics), () => {});
  const app = await buildApp({ config, keys: KeyStore.fromFile(keysFile), adapters: createAdapters(config.routing, config.adapters, deps), now: Date.now, metrics, upstreamClients: deps.clients });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}${path}`;
  for (let i = 0; i < 2; i++) await (await fetch(url, { headers: { 'x-api-key': BENCH_KEY } })).arrayBuffer();
  const service = app.server.listeners('request')[0] as RequestListener;

  const socket = new SinkSocket();
  const headers = { host: '127.0.0.1', 'user-agent': 'wrk', 'x-api-key': BENCH_KEY };
  const rawHeaders = Object.entries(headers).flat();
  const drive = (listener: RequestListener): void => {
    const req = new IncomingMessage(socket);
    req.method = 'GET';
    req.url = path;
    req.httpVersionMajor = 1;
    req.httpVersionMinor = 1;
    req.httpVersion = '1.1';
    req.rawHeaders = rawHeaders;
    req.headers = { ...headers };
    req.complete = true;
    req.push(null);
    const res = new ServerResponse(req);
    res.shouldKeepAlive = true;
    res.assignSocket(socket);
    listener(req, res);
    res.detachSocket(socket);
  };

  // The bare listener sends what the service sent (captured from one driven hit).
  const servedBefore = app.fastPathServed?.() ?? 0;
  socket.keep = true;
  drive(service);
  socket.keep = false;
  const captured = socket.last;
  if (!/x-cache: HIT/i.test(captured) || (app.fastPathServed?.() ?? 0) <= servedBefore) {
    throw new Error(`the driven request was not a fast-path hit:\n${captured.slice(0, 600)}`);
  }
  const headEnd = captured.indexOf('\r\n\r\n');
  const headerPairs = captured.slice(0, headEnd).split('\r\n').slice(1).map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)])
    .filter(([name]) => !/^(date|connection|keep-alive)$/i.test(name)).flat();
  const body = Buffer.from(captured.slice(headEnd + 4), 'latin1');
  const bare: RequestListener = (_req, res) => {
    res.writeHead(200, headerPairs);
    res.end(body);
  };
  return {
    app, service, bare, drive, captured,
    async close() {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
