// The in-process sequencer and replay log (no Redis): numbers per channel and symbol, a replay of
// what followed a seq while the log holds it, and "beyond the log" once length or age dropped it.
import { describe, expect, it } from 'vitest';
import { Sequencer, withSeq } from '../../src/stream/sequencer.ts';

describe('the in-process sequencer', () => {
  const clock = { t: 1_000_000 };
  const sequencer = new Sequencer({ settings: { maxLength: 5, maxAgeMs: 10_000 }, now: () => clock.t });

  it('numbers updates per channel and symbol from 1', async () => {
    expect(await sequencer.append('quotes', [['A.US', '{"p":1}', 0], ['B.US', '{"p":9}', 0]])).toEqual([1, 1]);
    expect(await sequencer.append('quotes', [['A.US', '{"p":2}', 0]])).toEqual([2]);
    expect(await sequencer.append('depth', [['A.US', '{"d":1}', 0]])).toEqual([1]);
    expect(await sequencer.latest('quotes', ['A.US', 'B.US', 'C.US'])).toEqual([2, 1, 0]);
  });

  it('continues from the last seq seen (Redis went down after numbering 41)', async () => {
    expect(await sequencer.append('quotes', [['C.US', '{"p":1}', 41]])).toEqual([42]);
  });

  it('replays what followed `since` while the log holds it', async () => {
    expect(await sequencer.replay('quotes', 'A.US', 1)).toEqual({ complete: true, updates: [{ seq: 2, json: '{"p":2}' }] });
    expect(await sequencer.replay('quotes', 'A.US', 2)).toEqual({ complete: true, updates: [] });
  });

  it('beyond the log by length or by age: not complete, with the latest seq', async () => {
    for (let p = 3; p <= 8; p++) await sequencer.append('quotes', [['A.US', `{"p":${p}}`, 0]]);
    // Holds seqs 4..8 (5 of them): after 3 replays, after 2 does not.
    expect(await sequencer.replay('quotes', 'A.US', 3)).toMatchObject({ complete: true, updates: [{ seq: 4 }, { seq: 5 }, { seq: 6 }, { seq: 7 }, { seq: 8 }] });
    expect(await sequencer.replay('quotes', 'A.US', 2)).toEqual({ complete: false, latest: 8 });
    clock.t += 10_001;
    expect(await sequencer.replay('quotes', 'A.US', 7)).toEqual({ complete: false, latest: 8 });
  });

  it('a since past the latest (the counter started again) is not complete either', async () => {
    expect(await sequencer.replay('quotes', 'B.US', 500)).toEqual({ complete: false, latest: 1 });
  });

  it('a replay must reach the seq this instance applied (`needed`): a log that ends before it is not complete', async () => {
    for (let p = 1; p <= 3; p++) await sequencer.append('quotes', [['D.US', `{"p":${p}}`, 0]]);
    // The log holds 1..3. An instance that applied 4 (numbered where this log never saw it) needs
    // 4 too: the replay would stop short of it, so it is a gap, not silence.
    expect(await sequencer.replay('quotes', 'D.US', 1, 3)).toMatchObject({ complete: true, updates: [{ seq: 2 }, { seq: 3 }] });
    expect(await sequencer.replay('quotes', 'D.US', 1, 4)).toEqual({ complete: false, latest: 4 });
    expect((await sequencer.replayMany('quotes', [{ symbol: 'D.US', since: 2 }, { symbol: 'D.US', since: 3, needed: 3 }])).map((r) => r.complete)).toEqual([true, true]);
  });

  it('withSeq adds the fields at the end of the element', () => {
    expect(JSON.parse(withSeq('{"a":1}', 7, ',"gap":true'))).toEqual({ a: 1, seq: 7, gap: true });
  });
});
