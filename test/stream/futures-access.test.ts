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

describe('a futures contract through a night session', () => {
  let night: StreamApp;
  let full: TestClient;
  const at = (date: string, hhmm: string) => Date.parse(`${date}T${hhmm}:00+08:00`);
  beforeAll(async () => {
    night = await startStreamApp({ at: at('2025-06-13', '22:00') });
    full = await connect(night.base, '/v1/ws/stream', STREAM_KEYS.full);
  });
  afterAll(async () => {
    full.close();
    await full.closed;
    await night.app.close();
  });

  it('Friday 22:00: the contract updates each tick while CN equities are closed', async () => {
    full.send({ op: 'subscribe', channel: 'quotes', symbols: ['au2604.SHF', '600519.SH'] });
    expect(await full.next()).toEqual({ op: 'subscribed', channel: 'quotes', symbols: ['au2604.SHF', '600519.SH'], total: 2 });
    const snapshot = await full.next<{ op: string; data: Array<Record<string, unknown>> }>();
    expect(snapshot.data.map((q) => [q.symbol, q.session])).toEqual([['au2604.SHF', 'regular'], ['600519.SH', 'closed']]);
    night.clock.t = at('2025-06-13', '22:01');
    await night.hub.tick();
    const update = await full.next<{ op: string; data: Array<Record<string, unknown>> }>();
    expect(update.op).toBe('quotes');
    expect(update.data.map((q) => q.symbol)).toEqual(['au2604.SHF']);
    expect((update.data[0].ext as Record<string, unknown>).type).toBe('cn_futures');
  });

  it('after the night (02:30 Saturday): one update says closed, then nothing is polled', async () => {
    night.clock.t = at('2025-06-14', '02:31');
    await night.hub.tick();
    const closing = await full.next<{ op: string; data: Array<Record<string, unknown>> }>();
    expect(closing.data.map((q) => [q.symbol, q.session])).toEqual([['au2604.SHF', 'closed']]);
    night.clock.t = at('2025-06-14', '03:30');
    await night.hub.tick();
    expect(await full.nothingPending()).toBe(true);
  });
});
