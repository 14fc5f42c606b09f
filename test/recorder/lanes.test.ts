// The recorder's lane: background calls never take the slots left to users, and a user call
// issued while background work holds every slot it may starts at once (deterministic: no timing).
import { describe, expect, it } from 'vitest';
import type { Adapter } from '../../adapters/types.ts';
import { createLanes } from '../../src/upstream/lanes.ts';
import { createResilience } from '../../src/upstream/resilience.ts';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => { open = r; });
  return { opened, open };
}

describe('lanes', () => {
  it('background holds at most its slots; a user call starts at once while they are all held', async () => {
    const lanes = createLanes(4, 3);
    const release = gate();
    const started: string[] = [];
    const bg = Array.from({ length: 6 }, (_, i) => lanes.run('background', async () => {
      started.push(`bg${i}`);
      await release.opened;
    }));
    await Promise.resolve();
    expect(started).toEqual(['bg0', 'bg1', 'bg2']);
    expect(lanes.backgroundActive).toBe(3);
    expect(lanes.pendingCount('background')).toBe(3);
    let userStarted = false;
    const user = lanes.run('user', async () => { userStarted = true; });
    expect(userStarted).toBe(true);
    await user;
    release.open();
    await Promise.all(bg);
    expect(started).toHaveLength(6);
  });

  it('a freed slot goes to a waiting user call before a waiting background call', async () => {
    const lanes = createLanes(2, 2);
    const first = gate();
    const order: string[] = [];
    const a = lanes.run('background', async () => { order.push('bg-a'); await first.opened; });
    const b = lanes.run('user', async () => { order.push('user-b'); await first.opened; });
    const c = lanes.run('background', async () => { order.push('bg-c'); });
    const d = lanes.run('user', async () => { order.push('user-d'); });
    expect(order).toEqual(['bg-a', 'user-b']);
    first.open();
    await Promise.all([a, b, c, d]);
    expect(order.slice(2)).toEqual(['user-d', 'bg-c']);
  });
});

describe('resilience with a background lane', () => {
  const adapter = { id: 'v', label: 'vendor v' } as unknown as Adapter;
  const settings = { deadlineMs: 60_000, concurrency: 3, maxQueue: 100, breaker: { failureThreshold: 5, openMs: 1000 } };

  it('with the recorder holding concurrency − 1 slots and more queued, a user call reaches the vendor at once', async () => {
    const r = createResilience('v', settings, { now: Date.now });
    const vendorHold = gate();
    const atVendor: string[] = [];
    const recorder = Array.from({ length: 5 }, (_, i) => r.call(adapter, 'candles', async () => {
      atVendor.push(`rec${i}`);
      await vendorHold.opened;
      return i;
    }, undefined, 'background'));
    await new Promise((res) => setImmediate(res));
    expect(atVendor).toEqual(['rec0', 'rec1']);
    expect(r.health().inFlight).toBe(2);
    const user = r.call(adapter, 'candles', async () => { atVendor.push('user'); return 'u'; });
    await new Promise((res) => setImmediate(res));
    expect(atVendor).toEqual(['rec0', 'rec1', 'user']);
    await expect(user).resolves.toBe('u');
    vendorHold.open();
    await expect(Promise.all(recorder)).resolves.toEqual([0, 1, 2, 3, 4]);
  });

  it('without the lane (all calls users), the same user call would queue behind them', async () => {
    const r = createResilience('v', settings, { now: Date.now });
    const vendorHold = gate();
    const atVendor: string[] = [];
    const others = Array.from({ length: 5 }, (_, i) => r.call(adapter, 'candles', async () => {
      atVendor.push(`u${i}`);
      await vendorHold.opened;
      return i;
    }));
    await new Promise((res) => setImmediate(res));
    const late = r.call(adapter, 'candles', async () => { atVendor.push('late'); return 'l'; });
    await new Promise((res) => setImmediate(res));
    expect(atVendor).not.toContain('late');
    vendorHold.open();
    await Promise.all([...others, late]);
  });
});
