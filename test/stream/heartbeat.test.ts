// Application-level heartbeats (issue 41.3): in a quiet market (the clock stands still, so no
// price changes) every connection gets `{"op":"heartbeat","time","last_seq"}` every
// stream.heartbeatMs, naming the last seq of each symbol it subscribes to; a socket that stops
// answering pings is closed within two ping intervals and counted by reason in /metrics.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, CN_MORNING } from '../helpers/app.ts';
import { connect, STREAM_KEYS, streamKeyStore } from './helpers.ts';

const HEARTBEAT_MS = 300;
const PING_MS = 1000;

let app: FastifyInstance;
let base: string;
beforeAll(async () => {
  ({ app } = await buildTestApp({
    now: () => CN_MORNING, keys: streamKeyStore(),
    configure: (c) => { c.stream.heartbeatMs = HEARTBEAT_MS; c.stream.pingIntervalMs = PING_MS; },
  }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `ws://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
});
afterAll(async () => { await app.close(); });

describe('heartbeats', () => {
  it('arrive every heartbeatMs in a quiet market, with the last seq of each subscribed symbol', async () => {
    const client = await connect(base, '/v1/ws/stream', STREAM_KEYS.full);
    const beats: { at: number; frame: Record<string, unknown> }[] = [];
    const other: string[] = [];
    client.ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as Record<string, unknown>;
      if (frame.op === 'heartbeat') beats.push({ at: performance.now(), frame });
      else other.push(String(frame.op));
    });
    client.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH'] });
    await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_MS * 6 + 100));
    client.close();
    // The ack and the snapshot, then nothing but heartbeats: the market is quiet.
    expect(other).toEqual(['subscribed', 'quotes']);
    // 6 in the window (a slow start on a loaded machine may lose the first).
    expect(beats.length).toBeGreaterThanOrEqual(4);
    expect(beats.length).toBeLessThanOrEqual(7);
    const gaps = beats.slice(1).map((b, i) => b.at - beats[i].at);
    for (const gap of gaps) {
      expect(gap).toBeGreaterThan(HEARTBEAT_MS * 0.5);
      expect(gap).toBeLessThan(HEARTBEAT_MS * 1.7);
    }
    expect(beats.at(-1)?.frame).toEqual({ op: 'heartbeat', time: CN_MORNING, last_seq: { quotes: { '600519.SH': 0 }, depth: {} } });
  });

  it('a socket that stops answering pings is closed within two ping intervals and counted', async () => {
    const client = await connect(base, '/v1/ws/stream', STREAM_KEYS.full, { autoPong: false });
    const from = performance.now();
    await client.closed;
    const took = performance.now() - from;
    expect(took).toBeLessThan(PING_MS * 2 + 500);
    // The server's side of the close may follow the client's by a moment.
    const until = Date.now() + 2000;
    let body = '';
    while (Date.now() < until && !/reason="missed_pong"/.test(body)) {
      body = (await app.inject({ url: '/metrics' })).body;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(body).toMatch(/mdqs_stream_closed_total\{reason="missed_pong"\} 1/);
    expect(body).toMatch(/mdqs_stream_closed_total\{reason="client"\} 1/);
  });
});
