// The official TickFlow Python client's message forms replayed byte for byte (json.dumps spacing),
// its re-subscribe after a reconnect, its permessage-deflate offer and its keep-alive pings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, startStreamApp, STREAM_KEYS, type StreamApp } from './helpers.ts';

const cn = (hh: number, mm: number, ss = 0) => Date.UTC(2025, 5, 18, hh - 8, mm, ss);

let s: StreamApp;
beforeAll(async () => { s = await startStreamApp({ at: cn(10, 0) }); });
afterAll(async () => { await s.app.close(); });

describe('tf.stream (/v1/ws/stream)', () => {
  it('its subscribe payloads, exactly as json.dumps writes them', async () => {
    const client = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.full);
    client.send('{"op": "subscribe", "channel": "quotes", "symbols": ["600000.SH", "000001.SZ"]}');
    // The client logs msg.get("channel") and msg.get("total") of `subscribed`.
    expect(await client.next()).toEqual({ op: 'subscribed', channel: 'quotes', symbols: ['600000.SH', '000001.SZ'], total: 2 });
    const quotes = await client.next<{ op: string; data: Array<{ symbol: string; last_price: number }> }>();
    expect(quotes.op).toBe('quotes');
    expect(quotes.data.map((q) => q.symbol)).toEqual(['600000.SH', '000001.SZ']);
    client.send('{"op": "subscribe", "channel": "depth", "symbols": ["600000.SH"]}');
    expect(await client.next()).toEqual({ op: 'subscribed', channel: 'depth', symbols: ['600000.SH'], total: 1 });
    const depth = await client.next<{ op: string; data: Array<{ bid_prices: number[] }> }>();
    expect(depth.op).toBe('depth');
    expect(depth.data[0].bid_prices).toHaveLength(5);
    client.send('{"op": "unsubscribe", "channel": "depth", "symbols": ["600000.SH"]}');
    expect(await client.next()).toEqual({ op: 'unsubscribed', channel: 'depth', symbols: ['600000.SH'], total: 0 });
    client.close();
    await client.closed;
  });

  it('re-subscribes every channel after a dropped connection; the old subscriptions were released', async () => {
    // The capped plan allows 3 subscriptions per key: the re-subscribe fits only if the dropped
    // connection's were released.
    const first = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.capped);
    first.send('{"op": "subscribe", "channel": "quotes", "symbols": ["600000.SH", "000001.SZ"]}');
    await first.next();
    await first.next();
    first.send('{"op": "subscribe", "channel": "depth", "symbols": ["600000.SH"]}');
    await first.next();
    await first.next();
    first.ws.terminate();
    await first.closed;
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.capped);
    // for ch, syms in self._subs.items(): one message per channel, list(set) order.
    second.send('{"op": "subscribe", "channel": "quotes", "symbols": ["000001.SZ", "600000.SH"]}');
    second.send('{"op": "subscribe", "channel": "depth", "symbols": ["600000.SH"]}');
    expect(await second.next()).toEqual({ op: 'subscribed', channel: 'quotes', symbols: ['000001.SZ', '600000.SH'], total: 2 });
    expect((await second.next()).op).toBe('quotes');
    expect(await second.next()).toEqual({ op: 'subscribed', channel: 'depth', symbols: ['600000.SH'], total: 1 });
    expect((await second.next()).op).toBe('depth');
    s.clock.t += 60_000;
    await s.hub.tick();
    const ops = [(await second.next()).op, (await second.next()).op].sort();
    expect(ops).toEqual(['depth', 'quotes']);
    second.close();
    await second.closed;
  });

  it('negotiates permessage-deflate as the client offers it (client_max_window_bits) and compresses big frames', async () => {
    const client = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.full, { perMessageDeflate: true });
    expect(client.ws.extensions).toMatch(/^permessage-deflate/);
    const symbols = (await (await s.app.inject({ url: '/v1/universes/CN_Stock', headers: { 'x-api-key': STREAM_KEYS.full } })).json()).data.symbols.slice(0, 60);
    client.send(JSON.stringify({ op: 'subscribe', channel: 'quotes', symbols }));
    await client.next();
    const before = (client.ws as unknown as { _socket: { bytesRead: number } })._socket.bytesRead;
    let length = 0;
    client.ws.once('message', (data) => { length = data.toString().length; });
    const snapshot = await client.next<{ data: unknown[] }>();
    expect(snapshot.data).toHaveLength(60);
    const wire = (client.ws as unknown as { _socket: { bytesRead: number } })._socket.bytesRead - before;
    expect(length).toBeGreaterThan(10_000);
    expect(wire).toBeLessThan(length / 2);
    client.close();
    await client.closed;
  });

  it('its 20 s pings are answered with pongs', async () => {
    const client = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.full);
    const pong = new Promise<string>((resolve) => client.ws.once('pong', (data) => resolve(data.toString())));
    client.ws.ping('keepalive');
    expect(await pong).toBe('keepalive');
    client.close();
    await client.closed;
  });
});

describe('tf.realtime (/v1/ws/quotes, legacy)', () => {
  it('{"op": "subscribe", "symbols": [...]} without a channel; quotes arrive as op quotes', async () => {
    const client = await connect(s.base, '/v1/ws/quotes', STREAM_KEYS.full);
    client.send('{"op": "subscribe", "symbols": ["600000.SH", "00700.HK"]}');
    expect(await client.next()).toEqual({ op: 'subscribed', channel: 'quotes', symbols: ['600000.SH', '00700.HK'], total: 2 });
    expect((await client.next<{ op: string; data: unknown[] }>()).data).toHaveLength(2);
    client.send('{"op": "unsubscribe", "symbols": ["00700.HK"]}');
    expect(await client.next()).toEqual({ op: 'unsubscribed', channel: 'quotes', symbols: ['00700.HK'], total: 1 });
    client.close();
    await client.closed;
  });
});

describe('server keep-alive', () => {
  it('a connection that misses a pong is terminated on the next heartbeat; a live one stays', async () => {
    const live = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.full);
    const dead = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.full, { autoPong: false });
    s.hub.heartbeat();
    await new Promise((resolve) => setTimeout(resolve, 100));
    s.hub.heartbeat();
    expect((await dead.closed).code).toBe(1006);
    live.send({ op: 'subscribe', channel: 'quotes', symbols: ['600000.SH'] });
    expect((await live.next()).op).toBe('subscribed');
    live.close();
    await live.closed;
  });
});
