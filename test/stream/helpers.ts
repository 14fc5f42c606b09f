// Real sockets: the app listens on port 0 and `ws` clients connect to it. The clock is a variable
// the test moves; the hub runs in manual mode so each `tick()` is one refresh, driven by the test.
import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import { createAdapters } from '../../src/upstream/registry.ts';
import type { Adapter } from '../../adapters/types.ts';
import { loadDefaultConfig } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import { FEATURES, KeyStore, parseKeysFile, sha256Hex } from '../../src/access/keys.ts';
import { streamHub, type StreamHub } from '../../src/stream/index.ts';
import { buildTestApp, CN_MORNING } from '../helpers/app.ts';
import { fakeAdapter, type FakeAdapter } from '../helpers/fake-adapter.ts';

export const STREAM_KEYS = {
  full: 'stream-full-key',
  cnQuotes: 'stream-cn-quotes-key',
  noStream: 'stream-none-key',
  depthOnly: 'stream-depth-only-key',
  capped: 'stream-capped-key',
  slowMsgs: 'stream-rate-key',
};

const ALL = [...FEATURES];

/** Plans carry max_subscriptions / max_connections as keys.ts will; read defensively by the hub. */
export function streamKeyStore(): KeyStore {
  const store = new KeyStore(parseKeysFile({
    plans: {
      full: { markets: ['CN', 'HK', 'US', 'CN_FUTURES'], features: ALL, rate_limit: { max: 100000, window_ms: 60000 }, max_symbols: 100 },
      cn_quotes: { markets: ['CN'], features: ['quotes'], rate_limit: { max: 1000, window_ms: 60000 }, max_symbols: 10 },
      none: { markets: ['CN', 'HK', 'US'], features: ['klines_daily', 'instruments'], rate_limit: { max: 1000, window_ms: 60000 }, max_symbols: 10 },
      depth_only: { markets: ['CN', 'HK', 'US'], features: ['depth'], rate_limit: { max: 1000, window_ms: 60000 }, max_symbols: 10 },
      capped: { markets: ['CN', 'HK', 'US'], features: ['quotes', 'depth'], rate_limit: { max: 1000, window_ms: 60000 }, max_symbols: 10 },
      rate: { markets: ['CN', 'HK', 'US'], features: ['quotes'], rate_limit: { max: 3, window_ms: 60000 }, max_symbols: 10 },
    },
    keys: [
      { id: 'full', plan: 'full', sha256: sha256Hex(STREAM_KEYS.full) },
      { id: 'cn-quotes', plan: 'cn_quotes', sha256: sha256Hex(STREAM_KEYS.cnQuotes) },
      { id: 'none', plan: 'none', sha256: sha256Hex(STREAM_KEYS.noStream) },
      { id: 'depth-only', plan: 'depth_only', sha256: sha256Hex(STREAM_KEYS.depthOnly) },
      { id: 'capped', plan: 'capped', sha256: sha256Hex(STREAM_KEYS.capped) },
      { id: 'rate', plan: 'rate', sha256: sha256Hex(STREAM_KEYS.slowMsgs) },
    ],
  }));
  // Until keys.ts parses max_subscriptions / max_connections, set them on the parsed plan.
  const capped = store.lookup(STREAM_KEYS.capped)?.plan as unknown as Record<string, unknown>;
  capped.maxSubscriptions = 3;
  capped.maxConnections = 2;
  const full = store.lookup(STREAM_KEYS.full)?.plan as unknown as Record<string, unknown>;
  full.maxSubscriptions = 100_000;
  full.maxConnections = 1_000;
  return store;
}

export interface StreamApp {
  app: FastifyInstance;
  hub: StreamHub;
  base: string;
  clock: { t: number };
  adapter: FakeAdapter;
  config: Config;
}

export async function startStreamApp(options: { at?: number; configure?: (config: Config) => void } = {}): Promise<StreamApp> {
  const clock = { t: options.at ?? CN_MORNING };
  const now = () => clock.t;
  const config = loadDefaultConfig();
  options.configure?.(config);
  const sim = createAdapters(config.routing, config.adapters, () => ({ now })).get('sim') as Adapter;
  const adapter = fakeAdapter(sim);
  const { app } = await buildTestApp({
    now, keys: streamKeyStore(), adapters: new Map([['sim', adapter]]), configure: options.configure,
  });
  const hub = streamHub(app);
  hub.manual();
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { app, hub, base: `ws://127.0.0.1:${port}`, clock, adapter, config };
}

/** A client that queues every message, so tests read them in order with `next()`. */
export class TestClient {
  readonly ws: WebSocket;
  readonly messages: unknown[] = [];
  #waiters: Array<(m: unknown) => void> = [];
  closed: Promise<{ code: number; reason: string }>;

  constructor(url: string, options: WebSocket.ClientOptions = {}) {
    this.ws = new WebSocket(url, { perMessageDeflate: false, ...options });
    this.ws.on('message', (data) => {
      const message = JSON.parse(data.toString());
      const waiter = this.#waiters.shift();
      if (waiter) waiter(message);
      else this.messages.push(message);
    });
    this.closed = new Promise((resolve) => this.ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  opened(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.ws.readyState === WebSocket.OPEN) return resolve();
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  next<T = Record<string, unknown>>(timeoutMs = 5000): Promise<T> {
    const queued = this.messages.shift();
    if (queued !== undefined) return Promise.resolve(queued as T);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no message within the timeout')), timeoutMs);
      this.#waiters.push((m) => { clearTimeout(timer); resolve(m as T); });
    });
  }

  /** Nothing arrives for a short while (a round trip through the server proves the order). */
  async nothingPending(): Promise<boolean> {
    await new Promise((resolve) => setTimeout(resolve, 50));
    return this.messages.length === 0;
  }

  close(): void {
    this.ws.close();
  }
}

export async function connect(base: string, path: string, key: string | undefined, options: WebSocket.ClientOptions = {}): Promise<TestClient> {
  const url = key === undefined ? `${base}${path}` : `${base}${path}?api_key=${encodeURIComponent(key)}`;
  const client = new TestClient(url, options);
  await client.opened();
  return client;
}

/** The handshake refused: status and JSON body. */
export function refused(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => reject(new Error('the handshake was accepted')));
    ws.on('error', () => undefined);
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
        ws.terminate();
      });
    });
  });
}
