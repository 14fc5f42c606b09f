// Indices on the stream: a quotes subscription of 000001.SH and 000001.SZ gets the SSE Composite and
// Ping An Bank apart, equal to REST; a depth subscription of an index is refused like an unknown
// symbol (SYMBOL_NOT_FOUND), while the stock beside it is subscribed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, startStreamApp, STREAM_KEYS, type StreamApp, type TestClient } from './helpers.ts';

const cn = (hh: number, mm: number, ss = 0) => Date.UTC(2025, 5, 18, hh - 8, mm, ss);
let s: StreamApp;
let client: TestClient;
beforeAll(async () => {
  s = await startStreamApp({ at: cn(10, 15, 30) });
  client = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.full);
});
afterAll(async () => {
  client.close();
  await client.closed;
  await s.app.close();
});

type Data = { op: string; data: Array<Record<string, unknown>> };
const strip = ({ seq: _seq, ...rest }: Record<string, unknown>) => rest;

describe('stream: indices', () => {
  it('quotes of 000001.SH and 000001.SZ: two instruments, each equal to REST', async () => {
    client.send({ op: 'subscribe', channel: 'quotes', symbols: ['000001.SH', '000001.SZ', 'hsi.hk'] });
    expect(await client.next()).toEqual({ op: 'subscribed', channel: 'quotes', symbols: ['000001.SH', '000001.SZ', 'HSI.HK'], total: 3 });
    const snapshot = await client.next<Data>();
    const rest = await s.app.inject({ url: '/v1/quotes?symbols=000001.SH,000001.SZ,HSI.HK', headers: { 'x-api-key': STREAM_KEYS.full } });
    expect(snapshot.data.map(strip)).toEqual(rest.json().data);
    expect(snapshot.data.map((q) => (q.ext as { name: string }).name)).toEqual(['上证指数', '平安银行', '恒生指数']);
  });

  it('depth of 000001.SH is refused (SYMBOL_NOT_FOUND: no order book); 000001.SZ is subscribed', async () => {
    client.send({ op: 'subscribe', channel: 'depth', symbols: ['000001.SH', '000001.SZ'] });
    const frames = [await client.next<Record<string, unknown>>(), await client.next<Record<string, unknown>>(), await client.next<Record<string, unknown>>()];
    const error = frames.find((f) => f.op === 'error');
    expect(error).toMatchObject({ op: 'error', error: 'SYMBOL_NOT_FOUND', details: { channel: 'depth', symbols: ['000001.SH'] } });
    expect(frames.find((f) => f.op === 'subscribed')).toEqual({ op: 'subscribed', channel: 'depth', symbols: ['000001.SZ'], total: 1 });
    const depth = frames.find((f) => f.op === 'depth') as Data;
    expect(depth.data.map((d) => d.symbol)).toEqual(['000001.SZ']);
  });
});
