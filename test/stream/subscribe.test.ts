// Subscribe → ack → snapshot (the REST shapes) → changed symbols only, per tick, while the market
// is in session; unsubscribe stops them; every bad message gets an error and the socket stays open.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, refused, startStreamApp, STREAM_KEYS, type StreamApp, type TestClient } from './helpers.ts';

// 2025-06-18 (Wednesday), Asia/Shanghai = UTC+8.
const cn = (hh: number, mm: number, ss = 0) => Date.UTC(2025, 5, 18, hh - 8, mm, ss);

let s: StreamApp;
beforeAll(async () => { s = await startStreamApp({ at: cn(10, 15, 30) }); });
afterAll(async () => { await s.app.close(); });

async function rest(path: string): Promise<unknown> {
  const res = await s.app.inject({ url: path, headers: { 'x-api-key': STREAM_KEYS.full } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

type Data = { op: string; data: Array<Record<string, unknown>> };

/** An element as REST has it: the stream adds `seq` (its number per channel and symbol) and nothing else. */
function withoutSeq(element: Record<string, unknown>): Record<string, unknown> {
  expect(Number.isInteger(element.seq)).toBe(true);
  const { seq: _seq, ...rest } = element;
  return rest;
}

describe('quotes and depth through a session', () => {
  let client: TestClient;
  beforeAll(async () => { client = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.full); });
  afterAll(async () => { client.close(); await client.closed; });

  it('subscribe answers subscribed, then a snapshot equal to GET /v1/quotes at the same instant', async () => {
    client.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH', '700.hk', '000001.SZ'] });
    expect(await client.next()).toEqual({ op: 'subscribed', channel: 'quotes', symbols: ['600519.SH', '00700.HK', '000001.SZ'], total: 3 });
    const snapshot = await client.next<Data>();
    expect(snapshot.op).toBe('quotes');
    expect(snapshot.data.map(withoutSeq)).toEqual(await rest('/v1/quotes?symbols=600519.SH,00700.HK,000001.SZ'));
    // No update yet: the snapshot carries the last seq assigned, none.
    expect(snapshot.data.map((q) => q.seq)).toEqual([0, 0, 0]);
  });

  it('a depth subscribe gets the /v1/depth shape', async () => {
    client.send({ op: 'subscribe', channel: 'depth', symbols: ['600519.SH'] });
    expect(await client.next()).toEqual({ op: 'subscribed', channel: 'depth', symbols: ['600519.SH'], total: 1 });
    const snapshot = await client.next<Data>();
    expect(snapshot.op).toBe('depth');
    expect(snapshot.data.map(withoutSeq)).toEqual([await rest('/v1/depth?symbol=600519.SH')]);
  });

  it('a tick at the same instant pushes nothing (nothing changed)', async () => {
    await s.hub.tick();
    expect(await client.nothingPending()).toBe(true);
  });

  it('a minute later each channel pushes one batch of the changed symbols, equal to REST', async () => {
    s.clock.t = cn(10, 16, 30);
    await s.hub.tick();
    const frames = [await client.next<Data>(), await client.next<Data>()];
    const quotes = frames.find((f) => f.op === 'quotes') as Data;
    const depth = frames.find((f) => f.op === 'depth') as Data;
    expect(quotes.data.map((q) => q.symbol).sort()).toEqual(['000001.SZ', '00700.HK', '600519.SH']);
    const restQuotes = await rest('/v1/quotes?symbols=600519.SH,00700.HK,000001.SZ') as Array<Record<string, unknown>>;
    for (const q of quotes.data) expect(withoutSeq(q)).toEqual(restQuotes.find((r) => r.symbol === q.symbol));
    expect(depth.data.map(withoutSeq)).toEqual([await rest('/v1/depth?symbol=600519.SH')]);
    // The first update of each channel and symbol.
    expect([...quotes.data, ...depth.data].map((e) => e.seq)).toEqual([1, 1, 1, 1]);
  });

  it('CN lunch break: HK still trades, CN is not refreshed after the edge grace', async () => {
    s.clock.t = cn(11, 45);
    await s.hub.tick(); // the edge tick: CN's 11:30 values arrive once
    const edge = [await client.next<Data>(), await client.next<Data>()];
    expect(edge.map((f) => f.op).sort()).toEqual(['depth', 'quotes']);
    expect(edge.find((f) => f.op === 'quotes')?.data.find((q) => q.symbol === '600519.SH')).toMatchObject({ session: 'lunch_break' });
    while ((await client.nothingPending()) === false) await client.next();
    s.adapter.reset();
    s.clock.t = cn(12, 10);
    await s.hub.tick();
    expect(s.adapter.symbolsOf('getQuotes')).toEqual(['00700.HK']);
    expect(s.adapter.calls.getDepth).toBe(0);
    const hk = await client.next<Data>();
    expect(hk.data.map((q) => q.symbol)).toEqual(['00700.HK']);
  });

  it('the afternoon session resumes CN updates', async () => {
    s.clock.t = cn(13, 5);
    s.adapter.reset();
    await s.hub.tick();
    expect(s.adapter.symbolsOf('getQuotes').sort()).toEqual(['000001.SZ', '00700.HK', '600519.SH']);
    const frames = [await client.next<Data>(), await client.next<Data>()];
    expect(frames.map((f) => f.op).sort()).toEqual(['depth', 'quotes']);
  });

  it('unsubscribe acknowledges and stops the pushes and the upstream reads of those symbols', async () => {
    client.send({ op: 'unsubscribe', channel: 'quotes', symbols: ['600519.SH', '00700.HK', '000001.SZ'] });
    expect(await client.next()).toEqual({ op: 'unsubscribed', channel: 'quotes', symbols: ['600519.SH', '00700.HK', '000001.SZ'], total: 0 });
    client.send({ op: 'unsubscribe', channel: 'depth', symbols: ['600519.SH'] });
    expect(await client.next()).toEqual({ op: 'unsubscribed', channel: 'depth', symbols: ['600519.SH'], total: 0 });
    s.adapter.reset();
    s.clock.t = cn(13, 30);
    await s.hub.tick();
    expect(s.adapter.count()).toBe(0);
    expect(await client.nothingPending()).toBe(true);
  });

  it('after the close, a closed market gets its snapshot on subscribe and nothing more', async () => {
    s.clock.t = cn(20, 0);
    await s.hub.tick();
    client.send({ op: 'subscribe', channel: 'quotes', symbols: ['600036.SH'] });
    expect((await client.next()).op).toBe('subscribed');
    const snapshot = await client.next<Data>();
    expect(snapshot.data[0]).toMatchObject({ symbol: '600036.SH', session: 'closed' });
    s.adapter.reset();
    for (const hhmm of [[20, 5], [21, 0], [23, 0]]) {
      s.clock.t = cn(hhmm[0], hhmm[1]);
      await s.hub.tick();
    }
    expect(s.adapter.calls.getQuotes).toBe(0);
    expect(await client.nothingPending()).toBe(true);
  });
});

describe('bad messages: an error message, and the connection stays open', () => {
  let client: TestClient;
  beforeAll(async () => {
    s.clock.t = cn(10, 15, 30);
    client = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.cnQuotes);
  });
  afterAll(async () => { client.close(); await client.closed; });

  const cases: Array<[string, unknown, Record<string, unknown>]> = [
    ['not JSON', '{"op": subscribe', { code: 400, error: 'INVALID_PARAMETER', message: 'the message is not valid JSON' }],
    ['a JSON array', '[1,2]', { code: 400, error: 'INVALID_PARAMETER' }],
    ['an unknown op', { op: 'sub', channel: 'quotes', symbols: ['600519.SH'] }, { code: 400, error: 'INVALID_PARAMETER', message: 'unknown op "sub"; use subscribe or unsubscribe' }],
    ['an unknown channel', { op: 'subscribe', channel: 'trades', symbols: ['600519.SH'] }, { code: 400, error: 'INVALID_PARAMETER', message: 'unknown channel "trades"; use quotes or depth' }],
    ['no channel on /v1/ws/stream', { op: 'subscribe', symbols: ['600519.SH'] }, { code: 400, error: 'INVALID_PARAMETER' }],
    ['symbols not an array', { op: 'subscribe', channel: 'quotes', symbols: '600519.SH' }, { code: 400, error: 'INVALID_PARAMETER' }],
    ['an empty symbols list', { op: 'subscribe', channel: 'quotes', symbols: [] }, { code: 400, error: 'INVALID_PARAMETER' }],
    ['a non-string symbol', { op: 'subscribe', channel: 'quotes', symbols: [600519] }, { code: 400, error: 'INVALID_SYMBOL' }],
    ['an invalid symbol', { op: 'subscribe', channel: 'quotes', symbols: ['600519.SH', 'NOPE'] }, { code: 400, error: 'INVALID_SYMBOL', details: { symbols: ['NOPE'] } }],
    ['a market the plan lacks', { op: 'subscribe', channel: 'quotes', symbols: ['AAPL.US'] }, { code: 403, error: 'MARKET_NOT_PERMITTED', details: { missing_markets: ['US'], symbols: ['AAPL.US'] } }],
    ['a channel the plan lacks', { op: 'subscribe', channel: 'depth', symbols: ['600519.SH'] }, { code: 403, error: 'NO_DEPTH_PERMISSION' }],
  ];

  it.each(cases)('%s', async (_name, message, expected) => {
    client.send(message);
    const error = await client.next();
    expect(error).toMatchObject({ op: 'error', ...expected });
    expect(typeof error.message).toBe('string');
  });

  it('an unknown symbol: the known ones are subscribed, the unknown one named in SYMBOL_NOT_FOUND', async () => {
    client.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH', '699999.SH'] });
    expect(await client.next()).toEqual({ op: 'subscribed', channel: 'quotes', symbols: ['600519.SH'], total: 1 });
    expect((await client.next<Data>()).data.map((q) => q.symbol)).toEqual(['600519.SH']);
    expect(await client.next()).toMatchObject({ op: 'error', code: 404, error: 'SYMBOL_NOT_FOUND', details: { channel: 'quotes', symbols: ['699999.SH'] } });
  });

  it('the legacy route refuses the depth channel', async () => {
    const legacy = await connect(s.base, '/v1/ws/quotes', STREAM_KEYS.full);
    legacy.send({ op: 'subscribe', channel: 'depth', symbols: ['600519.SH'] });
    expect(await legacy.next()).toMatchObject({ op: 'error', code: 400, error: 'INVALID_PARAMETER' });
    legacy.close();
    await legacy.closed;
  });

  it('the connection is still open and serving after all of them', async () => {
    client.send({ op: 'subscribe', channel: 'quotes', symbols: ['000001.SZ'] });
    expect(await client.next()).toEqual({ op: 'subscribed', channel: 'quotes', symbols: ['000001.SZ'], total: 2 });
    expect((await client.next<Data>()).op).toBe('quotes');
  });

  it('a message above maxPayloadBytes closes with 1009', async () => {
    const big = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.full);
    big.send({ op: 'subscribe', channel: 'quotes', symbols: Array.from({ length: 10_000 }, () => '600519.SH') });
    expect((await big.closed).code).toBe(1009);
  });
});

describe('limits', () => {
  it('max_subscriptions per key: past the cap an error names it and nothing is added', async () => {
    const a = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.capped);
    const b = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.capped);
    a.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH', '000001.SZ'] });
    expect((await a.next()).total).toBe(2);
    await a.next();
    b.send({ op: 'subscribe', channel: 'depth', symbols: ['600036.SH', '000002.SZ'] });
    expect(await b.next()).toMatchObject({
      op: 'error', code: 400, error: 'TOO_MANY_SYMBOLS', details: { max_subscriptions: 3, subscribed: 2, requested: 2 },
    });
    b.send({ op: 'subscribe', channel: 'depth', symbols: ['600036.SH'] });
    expect(await b.next()).toEqual({ op: 'subscribed', channel: 'depth', symbols: ['600036.SH'], total: 1 });
    await b.next();
    // Re-subscribing what is already subscribed costs nothing.
    a.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH'] });
    expect(await a.next()).toEqual({ op: 'subscribed', channel: 'quotes', symbols: ['600519.SH'], total: 2 });
    a.close();
    b.close();
    await Promise.all([a.closed, b.closed]);
  });

  it('the handshake and client messages count against the key rate limit (3 per minute here); pushes do not; reconnecting resets nothing', async () => {
    // 1: the handshake (an HTTP request of the key).
    const client = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.slowMsgs);
    // 2
    client.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH'] });
    await client.next();
    await client.next();
    s.clock.t += 60_000 - 1;
    for (let i = 0; i < 3; i++) await s.hub.tick();
    while ((await client.nothingPending()) === false) await client.next();
    // 3
    client.send({ op: 'subscribe', channel: 'quotes', symbols: ['000001.SZ'] });
    expect((await client.next()).op).toBe('subscribed');
    await client.next();
    client.send({ op: 'unsubscribe', channel: 'quotes', symbols: ['000001.SZ'] });
    expect(await client.next()).toMatchObject({ op: 'error', code: 429, error: 'RATE_LIMITED', retry_after_ms: 1 });
    client.close();
    await client.closed;
    // The budget is the key's, not the connection's: a new connection is refused at its handshake.
    const again = await refused(`${s.base}/v1/ws/stream?api_key=${STREAM_KEYS.slowMsgs}`);
    expect([again.status, again.body.error]).toEqual([429, 'RATE_LIMITED']);
    // Once the first two admissions leave the window, a handshake and one message fit, no more.
    s.clock.t += 2;
    const later = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.slowMsgs);
    later.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH'] });
    expect((await later.next()).op).toBe('subscribed');
    await later.next();
    later.send({ op: 'unsubscribe', channel: 'quotes', symbols: ['600519.SH'] });
    expect(await later.next()).toMatchObject({ op: 'error', code: 429, error: 'RATE_LIMITED' });
    later.close();
    await later.closed;
  });
});
