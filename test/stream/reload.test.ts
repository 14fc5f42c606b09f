// Issue 28.1 in one process, on real sockets: what a keys reload does to open stream connections
// beyond the two-instance test (test/redis/stream-keys.test.ts): a plan that no longer permits a
// route closes it with 4403, a lost channel is unsubscribed with an error frame while the
// connection stays, a key renamed in the file keeps its connections and counts under its new id,
// and the free tier's caps count per client address.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { KeyStore, sha256Hex } from '../../src/access/keys.ts';
import { streamHub } from '../../src/stream/index.ts';
import { buildTestApp } from '../helpers/app.ts';
import { connect, refused, type TestClient } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdqs-stream-reload-'));
const file = join(dir, 'keys.yaml');
const KEY = 'reload-stream-key';
const plan = (features: string[], extra: object = {}) => ({
  markets: ['CN', 'HK', 'US'], features, rate_limit: { max: 10_000, window_ms: 60_000 }, max_symbols: 10, ...extra,
});
function write(features: string[], id = 'k1', anonymousFeatures: string[] = ['quotes']): void {
  writeFileSync(file, stringify({
    plans: { p: plan(features), free: plan(anonymousFeatures, { max_connections: 1 }) },
    keys: [{ id, plan: 'p', sha256: sha256Hex(KEY) }],
    anonymous: { plan: 'free' },
  }));
}

let app: FastifyInstance;
let base: string;
let keys: KeyStore;
const clients: TestClient[] = [];

beforeAll(async () => {
  write(['quotes', 'depth']);
  keys = KeyStore.fromFile(file);
  ({ app } = await buildTestApp({ keys }));
  streamHub(app).manual();
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `ws://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
});

afterAll(async () => {
  for (const c of clients) c.ws.terminate();
  await app.close();
});

async function open(path: string, key?: string): Promise<TestClient> {
  const client = await connect(base, path, key);
  clients.push(client);
  return client;
}

async function reply(client: TestClient): Promise<Record<string, unknown>> {
  for (;;) {
    const message = await client.next();
    if (message.op !== 'quotes' && message.op !== 'depth') return message;
  }
}

describe('a keys reload and open stream connections', () => {
  it('plan loses quotes: the legacy quotes route closes with 4403; the stream keeps its depth and loses its quotes', async () => {
    const legacy = await open('/v1/ws/quotes', KEY);
    legacy.send({ op: 'subscribe', symbols: ['600519.SH'] });
    expect(await reply(legacy)).toMatchObject({ op: 'subscribed' });
    const stream = await open('/v1/ws/stream', KEY);
    stream.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH', '00700.HK'] });
    expect(await reply(stream)).toMatchObject({ op: 'subscribed', total: 2 });
    stream.send({ op: 'subscribe', channel: 'depth', symbols: ['600519.SH'] });
    expect(await reply(stream)).toMatchObject({ op: 'subscribed', channel: 'depth' });

    write(['depth']);
    keys.reload();
    expect(await legacy.closed).toEqual({ code: 4403, reason: 'plan no longer permits this stream' });
    expect(await reply(stream)).toMatchObject({
      op: 'error', code: 403, error: 'NO_QUOTES_PERMISSION', details: { channel: 'quotes', symbols: ['600519.SH', '00700.HK'], missing_features: ['quotes'] },
    });
    expect(streamHub(app).subscribedSymbols('quotes')).toEqual([]);
    expect(streamHub(app).subscribedSymbols('depth')).toEqual(['600519.SH']);
    stream.send({ op: 'unsubscribe', channel: 'depth', symbols: ['600519.SH'] });
    expect(await reply(stream)).toEqual({ op: 'unsubscribed', channel: 'depth', symbols: ['600519.SH'], total: 0 });
  });

  it('a key renamed in the file keeps its connections, now counted under its new id', async () => {
    const hub = streamHub(app);
    expect(hub.hasConnections('k1')).toBe(true);
    write(['quotes', 'depth'], 'k1-renamed');
    keys.reload();
    expect(hub.hasConnections('k1')).toBe(false);
    expect(hub.hasConnections('k1-renamed')).toBe(true);
    const stream = clients[1];
    stream.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH'] });
    expect(await reply(stream)).toMatchObject({ op: 'subscribed', channel: 'quotes' });
  });

  it('the free tier (no key): its max_connections counts per client address, and a reload applies to it too', async () => {
    const anonymous = await open('/v1/ws/stream');
    const second = await refused(`${base}/v1/ws/stream`);
    expect([second.status, second.body.error]).toEqual([429, 'TOO_MANY_CONNECTIONS']);
    // Another address has its own cap (127.0.0.2 is loopback too).
    const elsewhere = await connect(base, '/v1/ws/stream', undefined, { localAddress: '127.0.0.2' });
    clients.push(elsewhere);
    elsewhere.close();
    await elsewhere.closed;
    // A keyed connection from the same address is not counted with it.
    expect(streamHub(app).hasConnections('k1-renamed')).toBe(true);
    anonymous.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH'] });
    expect(await reply(anonymous)).toMatchObject({ op: 'subscribed' });
    // The operator takes quotes from the free plan: its stream connections close with 4403.
    write(['quotes', 'depth'], 'k1-renamed', ['klines_daily']);
    keys.reload();
    expect(await anonymous.closed).toEqual({ code: 4403, reason: 'plan no longer permits this stream' });
  });
});
