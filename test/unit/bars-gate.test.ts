// The bound on base bars that heavy candle requests hold at once (src/service/bars-gate.ts), alone
// and in MarketDataService.candles (issue 15 item 4).
import { describe, expect, it } from 'vitest';
import { createBarsGate } from '../../src/service/bars-gate.ts';
import { HEAVY_BARS_IN_FLIGHT, MarketDataService } from '../../src/service/market-data.ts';
import type { Loader } from '../../src/data/loader.ts';
import type { Resources } from '../../src/data/resources/index.ts';
import { emptyStatus } from '../../src/data/status.ts';
import { sizedCandles } from '../../src/candles/window.ts';
import type { CandleBuilder } from '../../src/service/candle-build.ts';
import type { Candles, SymbolRef } from '../../src/domain.ts';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('createBarsGate', () => {
  it('admits while the bars fit, then first come first served as bars are released', async () => {
    const gate = createBarsGate(100);
    const order: string[] = [];
    const a = await gate.acquire(60);
    const b = await gate.acquire(40);
    expect(gate.held).toBe(100);
    const c = gate.acquire(50).then((release) => (order.push('c'), release));
    const d = gate.acquire(10).then((release) => (order.push('d'), release));
    await tick();
    // d would fit after a release of 10, but c came first: nobody overtakes.
    expect(order).toEqual([]);
    expect(gate.waiting).toBe(2);
    b();
    await tick();
    expect(order).toEqual([]);
    a();
    b(); // twice: no effect
    await tick();
    expect(order).toEqual(['c', 'd']);
    expect(gate.held).toBe(60);
    (await c)();
    (await d)();
    expect(gate.held).toBe(0);
  });

  it('lets a request larger than the whole budget run, alone', async () => {
    const gate = createBarsGate(100);
    const small = await gate.acquire(10);
    let big = false;
    const pending = gate.acquire(1_000_000).then((release) => ((big = true), release));
    await tick();
    expect(big).toBe(false);
    small();
    const release = await pending;
    expect(big).toBe(true);
    expect(gate.held).toBe(100);
    let next = false;
    void gate.acquire(1).then(() => (next = true));
    await tick();
    expect(next).toBe(false);
    release();
    await tick();
    expect(next).toBe(true);
  });
});

describe('MarketDataService heavy candle requests', () => {
  it('fetch only as many worker-built series at once as fit the bars budget; light ones never wait', async () => {
    let inFlight = 0;
    let most = 0;
    const gates: Array<() => void> = [];
    const loader = {
      async loadOne(_spec: unknown, query: { count?: number }) {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise<void>((resolve) => gates.push(resolve));
        inFlight -= 1;
        const n = Math.min(query.count ?? 1, 10);
        const value = sizedCandles(n);
        for (let i = 0; i < n; i++) {
          value.timestamp[i] = Date.UTC(2025, 5, 16, 1, 31 + i);
          value.open[i] = value.high[i] = value.low[i] = value.close[i] = 10;
        }
        return { value, status: emptyStatus() };
      },
    } as unknown as Loader;
    const builder: CandleBuilder = { build: async (spec) => spec.raw as Candles, close: async () => {}, running: false };
    const service = new MarketDataService(loader, { candles: {} } as unknown as Resources, Date.now, builder);
    const ref: SymbolRef = { symbol: '600519.SH', code: '600519', region: 'CN' } as SymbolRef;
    // 60m × 1000 needs ~60,000 one-minute bars: four fit in the budget.
    const perRequest = (1000 + 2) * 60;
    const fits = Math.floor(HEAVY_BARS_IN_FLIGHT / perRequest);
    const heavy = Array.from({ length: 10 }, () => service.candles(ref, { period: '60m', count: 1000, adjust: 'none' }));
    await tick();
    expect(inFlight).toBe(fits);
    expect(service.heavyCandles).toEqual({ held: fits * perRequest, waiting: 10 - fits });
    // A light request (1m × 1000: built inline) is fetched at once.
    const light = service.candles(ref, { period: '1m', count: 1000, adjust: 'none' });
    await tick();
    expect(inFlight).toBe(fits + 1);
    // Answer everything as it arrives, until every request has its answer.
    let settled = false;
    const all = Promise.all([...heavy, light]).finally(() => (settled = true));
    while (!settled) {
      gates.splice(0).forEach((open) => open());
      await tick();
    }
    const answers = await all;
    expect(answers.every((a) => a !== undefined && a.candles.timestamp.length > 0)).toBe(true);
    expect(most).toBe(fits + 1);
    expect(service.heavyCandles).toEqual({ held: 0, waiting: 0 });
  });

  it('gives the room back when a fetch fails', async () => {
    let calls = 0;
    const loader = {
      async loadOne() {
        calls += 1;
        throw new Error('vendor down');
      },
    } as unknown as Loader;
    const builder: CandleBuilder = { build: async (spec) => spec.raw as Candles, close: async () => {}, running: false };
    const service = new MarketDataService(loader, { candles: {} } as unknown as Resources, Date.now, builder);
    const ref = { symbol: '600519.SH', code: '600519', region: 'CN' } as SymbolRef;
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => service.candles(ref, { period: '60m', count: 1000, adjust: 'none' })));
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect(calls).toBe(8);
    expect(service.heavyCandles).toEqual({ held: 0, waiting: 0 });
  });
});
