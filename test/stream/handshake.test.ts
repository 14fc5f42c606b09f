// The handshake: the key from the query or the header, refusals as HTTP statuses with our JSON
// error body before any upgrade, the per-key connection cap, and a plain GET answered 426.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, refused, startStreamApp, STREAM_KEYS, type StreamApp } from './helpers.ts';

let s: StreamApp;
beforeAll(async () => { s = await startStreamApp(); });
afterAll(async () => { await s.app.close(); });

describe('refused at the handshake with the JSON error body', () => {
  it('401 MISSING_API_KEY without a key', async () => {
    const { status, body } = await refused(`${s.base}/v1/ws/stream`);
    expect(status).toBe(401);
    expect(body).toMatchObject({ code: 401, error: 'MISSING_API_KEY' });
    expect(typeof body.request_id).toBe('string');
  });

  it('401 INVALID_API_KEY for an unknown key, on both routes', async () => {
    for (const path of ['/v1/ws/stream', '/v1/ws/quotes']) {
      const { status, body } = await refused(`${s.base}${path}?api_key=not-a-key`);
      expect(status, path).toBe(401);
      expect(body, path).toMatchObject({ code: 401, error: 'INVALID_API_KEY', message: 'the API key is not valid' });
    }
  });

  it('403 NO_QUOTES_PERMISSION when the plan has neither quotes nor depth', async () => {
    const { status, body } = await refused(`${s.base}/v1/ws/stream?api_key=${STREAM_KEYS.noStream}`);
    expect(status).toBe(403);
    expect(body).toMatchObject({ code: 403, error: 'NO_QUOTES_PERMISSION', details: { missing_features: ['quotes'] } });
  });

  it('403 on the legacy quotes stream for a depth-only plan; /v1/ws/stream admits it', async () => {
    const { status, body } = await refused(`${s.base}/v1/ws/quotes?api_key=${STREAM_KEYS.depthOnly}`);
    expect(status).toBe(403);
    expect(body).toMatchObject({ error: 'NO_QUOTES_PERMISSION' });
    const client = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.depthOnly);
    client.close();
    await client.closed;
  });

  it('429 TOO_MANY_CONNECTIONS past the plan max_connections, admitted again once one closes', async () => {
    const a = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.capped);
    const b = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.capped);
    const { status, body } = await refused(`${s.base}/v1/ws/stream?api_key=${STREAM_KEYS.capped}`);
    expect(status).toBe(429);
    expect(body).toMatchObject({ code: 429, error: 'TOO_MANY_CONNECTIONS', details: { max_connections: 2 } });
    a.close();
    await a.closed;
    const c = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.capped);
    b.close();
    c.close();
    await Promise.all([b.closed, c.closed]);
  });
});

describe('admitted', () => {
  it('takes the key from the X-API-Key header too', async () => {
    const client = await connect(s.base, '/v1/ws/stream', undefined, { headers: { 'x-api-key': STREAM_KEYS.full } });
    client.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH'] });
    expect(await client.next()).toEqual({ op: 'subscribed', channel: 'quotes', symbols: ['600519.SH'], total: 1 });
    client.close();
    await client.closed;
  });

  it('takes the key from a browser\'s subprotocol mdqs.key.<key> and selects mdqs.v1 (never echoing the key)', async () => {
    const browser = new (await import('ws')).default(`${s.base}/v1/ws/stream`, ['mdqs.v1', `mdqs.key.${STREAM_KEYS.full}`]);
    await new Promise((resolve, reject) => {
      browser.once('open', resolve);
      browser.once('error', reject);
    });
    expect(browser.protocol).toBe('mdqs.v1');
    const answer = new Promise<Record<string, unknown>>((resolve) => browser.once('message', (data) => resolve(JSON.parse(data.toString()))));
    browser.send(JSON.stringify({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH'] }));
    expect(await answer).toEqual({ op: 'subscribed', channel: 'quotes', symbols: ['600519.SH'], total: 1 });
    browser.close();
    const wrong = await refused(`${s.base}/v1/ws/stream`, { 'sec-websocket-protocol': 'mdqs.v1, mdqs.key.not-a-key' });
    expect(wrong).toMatchObject({ status: 401, body: { error: 'INVALID_API_KEY' } });
  });

  it('a plain GET (no upgrade) answers 426 UPGRADE_REQUIRED with the JSON body', async () => {
    const res = await s.app.inject({ url: `/v1/ws/stream?api_key=${STREAM_KEYS.full}` });
    expect(res.statusCode).toBe(426);
    expect(res.json()).toMatchObject({ code: 426, error: 'UPGRADE_REQUIRED' });
    expect(res.headers.upgrade).toBe('websocket');
  });

  it('the connections gauge counts open sockets per route', async () => {
    const a = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.full);
    const b = await connect(s.base, '/v1/ws/quotes', STREAM_KEYS.full);
    const text = await (await s.app.inject({ url: '/metrics' })).body;
    expect(text).toContain('mdqs_ws_connections{route="/v1/ws/stream"} 1');
    expect(text).toContain('mdqs_ws_connections{route="/v1/ws/quotes"} 1');
    a.close();
    b.close();
    await Promise.all([a.closed, b.closed]);
  });
});
