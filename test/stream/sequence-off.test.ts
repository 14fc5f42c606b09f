// stream.sequence: false: elements carry no `seq` (snapshots and updates), nothing is logged for
// resumes, and a subscribe with `since` gets a plain snapshot of now; beside it, the default (on)
// numbers the same updates and replays them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, startStreamApp, STREAM_KEYS, type StreamApp } from './helpers.ts';

const cn = (hh: number, mm: number, ss = 0) => Date.UTC(2025, 5, 18, hh - 8, mm, ss);
type Frame = { op: string; data?: Record<string, unknown>[] };

describe.each([false, true])('stream.sequence %s', (sequence) => {
  let s: StreamApp;
  beforeAll(async () => { s = await startStreamApp({ at: cn(10, 0), configure: (c) => { c.stream.sequence = sequence; } }); });
  afterAll(async () => { await s.app.close(); });

  it(sequence ? 'numbers every element and replays what a resume missed' : 'sends no seq and answers `since` with a snapshot of now, not a replay', async () => {
    const a = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.full);
    a.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH'] });
    expect((await a.next()).op).toBe('subscribed');
    const snapshot = await a.next<Frame>();
    const updates: Record<string, unknown>[] = [];
    for (let i = 0; i < 3; i++) {
      s.clock.t += 60_000;
      await s.hub.tick();
      updates.push(...(await a.next<Frame>()).data!);
    }
    expect(updates).toHaveLength(3);
    if (sequence) {
      expect(snapshot.data![0].seq).toBe(0);
      expect(updates.map((e) => e.seq)).toEqual([1, 2, 3]);
    } else {
      for (const element of [...snapshot.data!, ...updates]) expect(element).not.toHaveProperty('seq');
    }

    const b = await connect(s.base, '/v1/ws/stream', STREAM_KEYS.full);
    b.send({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH'], since: { '600519.SH': 1 } });
    expect((await b.next()).op).toBe('subscribed');
    const resumed = await b.next<Frame>();
    if (sequence) {
      // The two updates after seq 1, from the replay log.
      const more = resumed.data!.length === 2 ? [] : (await b.next<Frame>()).data!;
      expect([...resumed.data!, ...more].map((e) => e.seq)).toEqual([2, 3]);
    } else {
      // Now's value, as a snapshot: no replay, no gap marker.
      expect(resumed.data).toEqual([updates.at(-1)]);
    }
    a.close();
    b.close();
    await Promise.all([a.closed, b.closed]);
  });
});
