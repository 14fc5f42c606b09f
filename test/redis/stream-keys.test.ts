// Issue 28, items 1 and 3, through real processes: two instances (`node src/server.ts`) sharing a
// Redis of their own, real WebSocket clients.
//   1. A keys reload (SIGHUP on one instance, published to the other) closes every stream
//      connection of a revoked key with 4401 "key revoked" on both instances within a second,
//      applies a changed plan to open connections (channels and markets it no longer grants are
//      unsubscribed with an error frame, the newest connections past max_connections close with
//      4429, the newest subscriptions past max_subscriptions go), and a key that expires while
//      connected is closed with 4401 "key expired".
//   3. The message budget is the key's, fleet-wide: reconnecting (to either instance) and
//      resending never gets past the plan's rate_limit.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sha256Hex } from '../../src/access/keys.ts';
import type { ServerProcess } from '../e2e/server-process.ts';
import { TestClient } from '../stream/helpers.ts';
import { fleetDir, startFleet, writeKeysFile, type Fleet } from './processes.ts';
import { describeRedis } from './support.ts';

const { dir, keysFile } = fleetDir('mdqs-stream-keys-');
const BUDGET = 40;

const plans = {
  full: { markets: ['CN', 'HK', 'US'], features: ['quotes', 'depth'], rate_limit: { max: 1000, window_ms: 60_000 }, max_symbols: 10, max_subscriptions: 10, max_connections: 5 },
  narrow: { markets: ['CN'], features: ['quotes'], rate_limit: { max: 1000, window_ms: 60_000 }, max_symbols: 10, max_subscriptions: 1, max_connections: 1 },
  msgs: { markets: ['CN'], features: ['quotes'], rate_limit: { max: BUDGET, window_ms: 60_000 }, max_symbols: 10 },
};
const key = (id: string) => `${id}-stream-secret`;
const entry = (id: string, plan: string, extra: Record<string, string> = {}) => ({ id, plan, sha256: sha256Hex(key(id)), ...extra });

let fleet: Fleet;
let servers: ServerProcess[] = [];
const clients: TestClient[] = [];

beforeAll(async () => {
  writeKeys([entry('alice', 'full'), entry('bob', 'full'), entry('carol', 'full'), entry('dave', 'msgs')]);
  fleet = await startFleet(2, { dir, keysFile });
  servers = fleet.servers;
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.ws.terminate();
  await fleet?.stop();
});

async function open(server: number, id: string): Promise<TestClient> {
  const client = new TestClient(`ws://127.0.0.1:${servers[server].port}/v1/ws/stream?api_key=${key(id)}`);
  clients.push(client);
  await client.opened();
  return client;
}

/** The next message that is not a data frame (snapshots and pushes: a market may be in session). */
async function reply(client: TestClient): Promise<Record<string, unknown>> {
  for (;;) {
    const message = await client.next();
    if (message.op !== 'quotes' && message.op !== 'depth') return message;
  }
}

async function subscribe(client: TestClient, channel: string, symbols: string[]): Promise<void> {
  client.send({ op: 'subscribe', channel, symbols });
  expect(await reply(client)).toMatchObject({ op: 'subscribed', channel, symbols });
}

function writeKeys(keys: object[]): void {
  writeKeysFile(keysFile, plans, keys);
}

describeRedis('stream connections follow key reloads on every instance', () => {
  it('revoked: 4401 on both instances within a second; changed plan: applied to open connections', async () => {
    const aliceA = await open(0, 'alice');
    const aliceB = await open(1, 'alice');
    await subscribe(aliceA, 'quotes', ['600519.SH']);
    await subscribe(aliceB, 'quotes', ['600519.SH']);
    const bobA1 = await open(0, 'bob');
    await subscribe(bobA1, 'quotes', ['600519.SH', '00700.HK', '000001.SZ']);
    await subscribe(bobA1, 'depth', ['600519.SH']);
    const bobA2 = await open(0, 'bob');
    await subscribe(bobA2, 'quotes', ['600036.SH']);
    const bobB = await open(1, 'bob');
    await subscribe(bobB, 'quotes', ['AAPL.US', '600519.SH']);

    // The operator drops alice and moves bob to a narrower plan, then signals one instance.
    writeKeys([entry('bob', 'narrow'), entry('carol', 'full'), entry('dave', 'msgs')]);
    const signalled = Date.now();
    servers[0].proc.kill('SIGHUP');
    const [a, b] = await Promise.all([aliceA.closed, aliceB.closed]);
    const elapsed = Date.now() - signalled;
    expect(a).toEqual({ code: 4401, reason: 'key revoked' });
    expect(b).toEqual({ code: 4401, reason: 'key revoked' });
    expect(elapsed).toBeLessThan(1000);

    // bob on instance 0: two connections, the plan allows one: the newest closes.
    expect(await bobA2.closed).toEqual({ code: 4429, reason: 'too many connections for this key' });
    // The older one loses depth, HK, and the newest subscription past max_subscriptions (1).
    const frames = [await reply(bobA1), await reply(bobA1), await reply(bobA1)];
    expect(frames).toContainEqual(expect.objectContaining({ op: 'error', code: 403, error: 'MARKET_NOT_PERMITTED', details: expect.objectContaining({ channel: 'quotes', symbols: ['00700.HK'] }) }));
    expect(frames).toContainEqual(expect.objectContaining({ op: 'error', code: 403, error: 'NO_DEPTH_PERMISSION', details: expect.objectContaining({ channel: 'depth', symbols: ['600519.SH'] }) }));
    expect(frames).toContainEqual(expect.objectContaining({ op: 'error', code: 400, error: 'TOO_MANY_SYMBOLS', details: expect.objectContaining({ channel: 'quotes', symbols: ['000001.SZ'], max_subscriptions: 1 }) }));
    expect(Date.now() - signalled).toBeLessThan(1000);
    // It stays open under the new plan: what is left is one quote, HK is refused, unsubscribing shows the total.
    bobA1.send({ op: 'subscribe', channel: 'quotes', symbols: ['00700.HK'] });
    expect(await reply(bobA1)).toMatchObject({ op: 'error', error: 'MARKET_NOT_PERMITTED' });
    bobA1.send({ op: 'unsubscribe', channel: 'quotes', symbols: ['600519.SH'] });
    expect(await reply(bobA1)).toEqual({ op: 'unsubscribed', channel: 'quotes', symbols: ['600519.SH'], total: 0 });
    // Instance 1 learnt of the reload through Redis: AAPL.US is gone there too.
    expect(await reply(bobB)).toMatchObject({ op: 'error', error: 'MARKET_NOT_PERMITTED', details: { channel: 'quotes', symbols: ['AAPL.US'] } });
    bobB.send({ op: 'unsubscribe', channel: 'quotes', symbols: ['600519.SH'] });
    expect(await reply(bobB)).toEqual({ op: 'unsubscribed', channel: 'quotes', symbols: ['600519.SH'], total: 0 });
    // A new connection of the revoked key is refused at the handshake.
    const res = await fetch(`${servers[1].base}/v1/quotes?symbols=600519.SH`, { headers: { 'x-api-key': key('alice') } });
    expect(res.status).toBe(401);
  });

  it('a key that expires while connected: 4401 "key expired" on both instances, within a second of its expiry', async () => {
    const carolA = await open(0, 'carol');
    const carolB = await open(1, 'carol');
    await subscribe(carolA, 'quotes', ['600519.SH']);
    await subscribe(carolB, 'quotes', ['600519.SH']);
    // The operator gives carol an expiry 3 s ahead (rotate-key's grace does this) and reloads:
    // the open connections learn it from the reload, a new one from its handshake.
    const carolExpires = Date.now() + 3_000;
    writeKeys([entry('bob', 'narrow'), entry('carol', 'full', { expires: new Date(carolExpires).toISOString() }), entry('dave', 'msgs')]);
    servers[0].proc.kill('SIGHUP');
    await new Promise((r) => setTimeout(r, 1_000));
    const carolLate = await open(1, 'carol');
    const bounded = (client: TestClient) => Promise.race([client.closed, new Promise((r) => setTimeout(() => r('still open 2 s after the expiry'), carolExpires + 2_000 - Date.now()))]);
    const [a, b, late] = await Promise.all([bounded(carolA), bounded(carolB), bounded(carolLate)]);
    const after = Date.now() - carolExpires;
    expect(a).toEqual({ code: 4401, reason: 'key expired' });
    expect(b).toEqual({ code: 4401, reason: 'key expired' });
    expect(late).toEqual({ code: 4401, reason: 'key expired' });
    expect(after).toBeGreaterThanOrEqual(-50);
    expect(after).toBeLessThan(1000);
  }, 20_000);
});

describeRedis('the stream message budget is the key\'s, fleet-wide', () => {
  it(`reconnect and resend, alternating instances: never more than rate_limit.max (${BUDGET}) admissions a window`, async () => {
    let admitted = 0;
    let refusedMessages = 0;
    let refusedHandshakes = 0;
    for (let round = 0; round < 3; round += 1) {
      const url = `ws://127.0.0.1:${servers[round % 2].port}/v1/ws/stream?api_key=${key('dave')}`;
      const client = new TestClient(url);
      clients.push(client);
      const opened = await client.opened().then(() => true, () => false);
      if (!opened) {
        refusedHandshakes += 1;
        continue;
      }
      admitted += 1; // the handshake is a request of the key
      for (let i = 0; i < BUDGET; i += 1) client.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH'] });
      let replies = 0;
      while (replies < BUDGET) {
        const message = await reply(client);
        replies += 1;
        if (message.op === 'subscribed') admitted += 1;
        else if (message.error === 'RATE_LIMITED') refusedMessages += 1;
        else throw new Error(`unexpected ${JSON.stringify(message)}`);
      }
      client.close();
      await client.closed;
    }
    expect(admitted).toBe(BUDGET);
    expect(refusedMessages).toBe(1);
    expect(refusedHandshakes).toBe(2);
    // And REST with the same key, on either instance, is refused too: one budget.
    for (const server of servers) {
      const res = await fetch(`${server.base}/v1/quotes?symbols=600519.SH`, { headers: { 'x-api-key': key('dave') } });
      expect(res.status).toBe(429);
    }
  });
});
