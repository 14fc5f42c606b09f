import { describe, expect, it } from 'vitest';
import { heapGrowingPercent } from '../../src/process/heap-growing.ts';

describe('MDQS_HEAP_GROWING_PERCENT', () => {
  it('unset or empty leaves V8 its own factor', () => {
    expect(heapGrowingPercent({})).toEqual({});
    expect(heapGrowingPercent({ MDQS_HEAP_GROWING_PERCENT: ' ' })).toEqual({});
  });

  it('takes a whole percentage from 1 to 1000', () => {
    expect(heapGrowingPercent({ MDQS_HEAP_GROWING_PERCENT: '50' }, [])).toEqual({ percent: 50 });
    expect(heapGrowingPercent({ MDQS_HEAP_GROWING_PERCENT: '1' }, [])).toEqual({ percent: 1 });
    expect(heapGrowingPercent({ MDQS_HEAP_GROWING_PERCENT: '1000' }, [])).toEqual({ percent: 1000 });
  });

  it('leaves an explicit --heap-growing-percent (node\'s command line or NODE_OPTIONS) alone', () => {
    expect(heapGrowingPercent({ MDQS_HEAP_GROWING_PERCENT: '50' }, ['--max-semi-space-size=4', '--heap-growing-percent=30'])).toEqual({ flagGiven: true });
    expect(heapGrowingPercent({ MDQS_HEAP_GROWING_PERCENT: '50' }, ['--heap_growing_percent=30'])).toEqual({ flagGiven: true });
    expect(heapGrowingPercent({ MDQS_HEAP_GROWING_PERCENT: '50', NODE_OPTIONS: '--trace-warnings --heap-growing-percent=20' }, [])).toEqual({ flagGiven: true });
    expect(heapGrowingPercent({ MDQS_HEAP_GROWING_PERCENT: '50', NODE_OPTIONS: '--max-old-space-size=512' }, ['--max-semi-space-size=4'])).toEqual({ percent: 50 });
  });

  it.each(['0', '1001', '-5', '12.5', '50%', 'fifty', '1e2', '0x10'])('refuses %j, naming the variable', (raw) => {
    const result = heapGrowingPercent({ MDQS_HEAP_GROWING_PERCENT: raw });
    expect(result.percent).toBeUndefined();
    expect(result.problem).toBe(`MDQS_HEAP_GROWING_PERCENT must be a whole number of percent from 1 to 1000 (got ${JSON.stringify(raw)}); set it empty to keep V8's own growing factor`);
  });
});
