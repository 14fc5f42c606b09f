// Replay of TickFlow's published documentation examples (the WebSocket page's quote and depth
// payloads for 600000.SH, served as the REST bodies of /v1/quotes and /v1/depth/batch; sources:
// mocks/fixtures/README.md), checked field by field against what the vendor's own fields imply.

import { describe, expect, it } from 'vitest';
import { http, HttpResponse } from 'msw';
import { createTickflowAdapter } from '../../adapters/tickflow/index.ts';
import { fixture } from '../../mocks/handlers/support.ts';
import { cnTime, ref, testHttp, vendorServer } from './helpers.ts';

const BASE = 'https://tickflow.replay.test';
vendorServer([
  http.get(`${BASE}/v1/quotes`, () => HttpResponse.json(fixture('tickflow', 'replay-docs-quotes-600000'))),
  // /v1/depth/batch answers {data: {symbol: MarketDepth}} (docs/vendors.md#tickflow-responses): the page's depth payload keyed by its symbol.
  http.get(`${BASE}/v1/depth/batch`, () => {
    const { data } = fixture<{ data: { symbol: string } }>('tickflow', 'replay-docs-depth-600000');
    return HttpResponse.json({ data: { [data.symbol]: data } });
  }),
]);

const adapter = () => createTickflowAdapter({ baseUrl: BASE, apiKey: 'k' }, { now: () => cnTime('2026-04-21', '15:05'), http: testHttp('tickflow') });
const PF = ref('600000.SH');

describe('tickflow replay: documentation examples', () => {
  it('quote: ratios as fractions agree with the prices; CN volume in lots (amount / (volume·price) ≈ 100)', async () => {
    const raw = fixture<{ data: Array<Record<string, number> & { ext: Record<string, number> }> }>('tickflow', 'replay-docs-quotes-600000').data[0];
    const q = (await adapter().getQuotes([PF])).get('600000.SH')!;
    expect(q).toMatchObject({ last_price: 9.72, prev_close: 9.78, open: 9.78, high: 9.78, low: 9.68, amount: 422430500, timestamp: 1776754802000 });
    expect(q.ext.change_pct).toBeCloseTo((raw.last_price - raw.prev_close) / raw.prev_close, 6);
    expect(q.ext.change_amount).toBeCloseTo(raw.last_price - raw.prev_close, 9);
    expect(q.ext.amplitude).toBeCloseTo((raw.high - raw.low) / raw.prev_close, 6);
    // The vendor's own numbers: 422 430 500 / (426 585 × 9.72) ≈ 101.9, so volume is lots of 100.
    expect(raw.amount / (raw.volume * raw.last_price)).toBeGreaterThan(95);
    expect(q.volume).toBe(raw.volume * 100);
    // Noted, not asserted: the example's average price, 422 430 500 / 42 658 500 = 9.90, lies above its
    // own high 9.78, so the documented amount and volume are not from one tick (mocks/fixtures/README.md).
  });

  it('depth: five levels, bids descending from the last price, asks ascending one tick above, volumes lots → shares', async () => {
    const raw = fixture<{ data: Record<string, number[]> }>('tickflow', 'replay-docs-depth-600000').data;
    const d = (await adapter().getDepth!([PF])).get('600000.SH')!;
    expect(d.bid_prices).toEqual(raw.bid_prices);
    expect(d.ask_prices).toEqual(raw.ask_prices);
    expect(d.bid_prices[0]).toBe(9.72);
    expect(d.ask_prices[0]).toBeCloseTo(d.bid_prices[0] + 0.01, 9);
    for (let i = 1; i < 5; i++) {
      expect(d.bid_prices[i]).toBeLessThan(d.bid_prices[i - 1]);
      expect(d.ask_prices[i]).toBeGreaterThan(d.ask_prices[i - 1]);
    }
    expect(d.bid_volumes).toEqual(raw.bid_volumes.map((v) => v * 100));
    expect(d.ask_volumes).toEqual(raw.ask_volumes.map((v) => v * 100));
    expect(d.timestamp).toBe(1776754802000);
  });
});
