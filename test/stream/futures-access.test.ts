// The stream refuses a futures contract to a key whose plan lacks CN_FUTURES (403 in the error
// message, the connection stays open), and keeps serving the markets it has.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, startStreamApp, STREAM_KEYS, type StreamApp, type TestClient } from './helpers.ts';

let s: StreamApp;
let client: TestClient;
beforeAll(async () => {
  s = await startStreamApp({ at: Date.UTC(2025, 5, 18, 2, 15, 30) });
  client = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.cnQuotes);
});
afterAll(async () => {
  client.close();
  await client.closed;
  await s.app.close();
});

describe('CN_FUTURES on the stream', () => {
  it('a contract without the market: MARKET_NOT_PERMITTED naming CN_FUTURES, nothing subscribed', async () => {
    client.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH', 'au2604.SHF'] });
    expect(await client.next()).toMatchObject({
      op: 'error', code: 403, error: 'MARKET_NOT_PERMITTED', details: { missing_markets: ['CN_FUTURES'], symbols: ['au2604.SHF'] },
    });
    client.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH'] });
    expect(await client.next()).toEqual({ op: 'subscribed', channel: 'quotes', symbols: ['600519.SH'], total: 1 });
  });
});
