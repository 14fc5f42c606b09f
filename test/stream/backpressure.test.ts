// Fan-out and back-pressure: one upstream refresh per symbol per tick whatever the number of
// subscribers, the same bytes to every subscriber, a client that never reads conflated and then
// closed with 1013 while a healthy one keeps receiving, and app.close() → 1001 after in-flight sends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, startStreamApp, STREAM_KEYS, type StreamApp, type TestClient } from './helpers.ts';

const cn = (hh: number, mm: number, ss = 0) => Date.UTC(2025, 5, 18, hh - 8, mm, ss);

async function metric(s: StreamApp, name: string): Promise<number> {
  const text = (await s.app.inject({ url: '/metrics' })).body;
  const line = text.split('\n').find((l) => l.startsWith(name));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

/** Waits for a condition driven by socket I/O (never a timing assertion: it only bounds the wait). */
async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
}

async function poolSymbols(s: StreamApp, pool: string): Promise<string[]> {
  const res = await s.app.inject({ url: `/v1/universes/${pool}`, headers: { 'x-api-key': STREAM_KEYS.full } });
  return res.json().data.symbols as string[];
}

describe('200 clients on the same 50 symbols', () => {
  let s: StreamApp;
  const clients: TestClient[] = [];
  beforeAll(async () => { s = await startStreamApp({ at: cn(10, 0) }); });
  afterAll(async () => {
    for (const c of clients) c.close();
    await s.app.close();
  });

  it('one upstream refresh per symbol per tick, one frame per client per tick, the same bytes for all', async () => {
    const symbols = (await poolSymbols(s, 'CN_Stock')).slice(0, 50);
    expect(symbols).toHaveLength(50);
    for (let i = 0; i < 200; i += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, () => connect(s.base, '/v1/ws/stream', STREAM_KEYS.full)));
      clients.push(...batch);
    }
    await Promise.all(clients.map(async (c) => {
      c.send({ op: 'subscribe', channel: 'quotes', symbols });
      expect((await c.next()).total).toBe(50);
      expect((await c.next<{ data: unknown[] }>()).data).toHaveLength(50);
    }));
    expect(await metric(s, 'mdqs_ws_subscriptions{channel="quotes"}')).toBe(200 * 50);
    s.adapter.reset();
    const sentBefore = await metric(s, 'mdqs_ws_messages_sent_total{channel="quotes"}');
    for (let tick = 1; tick <= 3; tick++) {
      s.clock.t += 60_000;
      await s.hub.tick();
      const frames = await Promise.all(clients.map((c) => new Promise<string>((resolve) => c.ws.once('message', (d) => resolve(d.toString())))));
      // Each symbol asked of the adapter exactly once this tick.
      const asked = s.adapter.symbolsOf('getQuotes');
      expect(asked.slice().sort()).toEqual(Array.from({ length: tick }, () => symbols).flat().sort());
      expect(new Set(frames).size).toBe(1);
      expect(JSON.parse(frames[0]).data).toHaveLength(50);
    }
    expect(await metric(s, 'mdqs_ws_messages_sent_total{channel="quotes"}') - sentBefore).toBe(600);
    expect(await metric(s, 'mdqs_ws_refreshes_total{channel="quotes"}')).toBe(3);
  });
});

describe('a client that never reads', () => {
  let s: StreamApp;
  beforeAll(async () => {
    s = await startStreamApp({
      at: cn(9, 31),
      configure: (config) => { config.stream.slowCloseMs = 120_000; },
    });
  });
  afterAll(async () => { await s.app.close(); });

  it('is conflated, then closed with 1013, while a healthy client on the same symbols gets every tick', async () => {
    const symbols = [...await poolSymbols(s, 'CN_Stock'), ...await poolSymbols(s, 'HK_Stock')];
    const healthy = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.full);
    const slow = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.full);
    for (const c of [healthy, slow]) {
      for (const channel of ['quotes', 'depth']) {
        c.send({ op: 'subscribe', channel, symbols });
        expect((await c.next()).op).toBe('subscribed');
        expect((await c.next()).op).toBe(channel);
      }
    }
    // Stop reading: the kernel buffers fill, then the server's send buffer does.
    (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    let ticks = 0;
    let conflatedAt = 0;
    let received = 0;
    healthy.ws.on('message', () => { received += 1; });
    while (ticks < 140 && (await metric(s, 'mdqs_ws_slow_client_closes_total')) === 0) {
      s.clock.t += 60_000;
      await s.hub.tick();
      ticks += 1;
      if (conflatedAt === 0 && s.hub.behindCount > 0) {
        conflatedAt = ticks;
        // From here the client stays behind: closed once slowCloseMs (2 min of the test clock) has passed.
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(conflatedAt).toBeGreaterThan(0);
    expect(ticks).toBe(conflatedAt + 2);
    expect(await metric(s, 'mdqs_ws_conflations_total{channel="quotes"}')).toBeGreaterThan(0);
    expect(await metric(s, 'mdqs_ws_slow_client_closes_total')).toBe(1);
    // The healthy client got both channels on every tick (CN and HK move every minute here).
    await until(() => received >= 2 * ticks);
    expect(received).toBe(2 * ticks);
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await slow.closed;
    expect(closed.code).toBe(1013);
    expect(closed.reason).toMatch(/^slow consumer: behind for 120 s/);
    // The healthy one is still served.
    s.clock.t += 60_000;
    await s.hub.tick();
    await until(() => received >= 2 * ticks + 2);
    expect(received).toBe(2 * ticks + 2);
    healthy.close();
    await healthy.closed;
  });
});

describe('a client past the send-buffer bound', () => {
  it('is closed with 1013 at once, without waiting for slowCloseMs', async () => {
    const s = await startStreamApp({
      at: cn(9, 31),
      configure: (config) => { config.stream.sendBufferBytes = 16_384; config.stream.slowCloseMs = 600_000; },
    });
    const symbols = [...await poolSymbols(s, 'CN_Stock'), ...await poolSymbols(s, 'HK_Stock')];
    const slow = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.full);
    slow.send({ op: 'subscribe', channel: 'quotes', symbols });
    await slow.next();
    await slow.next();
    (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    let ticks = 0;
    while (ticks < 200 && (await metric(s, 'mdqs_ws_slow_client_closes_total')) === 0) {
      s.clock.t += 60_000;
      await s.hub.tick();
      ticks += 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await metric(s, 'mdqs_ws_slow_client_closes_total')).toBe(1);
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    // The reason says the bound closed it, not the (10 min) slowCloseMs clock.
    const closed = await slow.closed;
    expect(closed).toEqual({ code: 1013, reason: 'slow consumer: send buffer past its bound; reconnect and read faster' });
    await s.app.close();
  });
});

describe('app.close()', () => {
  it('closes every socket with 1001 after the in-flight tick was sent', async () => {
    const s = await startStreamApp({ at: cn(10, 0) });
    const client = await connect(s.base, '/v1/ws/quotes', STREAM_KEYS.full);
    client.send({ op: 'subscribe', symbols: ['600519.SH'] });
    await client.next();
    await client.next();
    s.clock.t += 60_000;
    void s.hub.tick();
    await s.app.close();
    expect((await client.next()).op).toBe('quotes');
    expect(await client.closed).toEqual({ code: 1001, reason: 'server shutting down' });
  });
});
