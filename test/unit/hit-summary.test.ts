import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FastifyBaseLogger } from 'fastify';
import { createHitSummary } from '../../src/http/hit-summary.ts';

function fakeLogger(): { logger: FastifyBaseLogger; lines: Array<[Record<string, unknown>, string]> } {
  const lines: Array<[Record<string, unknown>, string]> = [];
  return { logger: { info: (fields: Record<string, unknown>, msg: string) => lines.push([fields, msg]) } as unknown as FastifyBaseLogger, lines };
}

describe('cache hits summary line', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes one line per window with the counts since the last, and none for a window without hits', () => {
    vi.useFakeTimers();
    let clock = 1_000_000;
    const { logger, lines } = fakeLogger();
    const summary = createHitSummary(logger, 60_000, () => clock);
    summary.count('research', '/v1/quotes', 200);
    summary.count('research', '/v1/quotes', 304);
    summary.count('desk', '/v1/klines', 200);
    clock += 60_000;
    vi.advanceTimersByTime(60_000);
    expect(lines).toEqual([[{ fast_path: true, hits: 3, not_modified: 1, window_s: 60, by_key: { research: 2, desk: 1 }, by_route: { '/v1/quotes': 2, '/v1/klines': 1 } }, 'cache hits']]);
    clock += 60_000;
    vi.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(1);
    summary.count('desk', '/v1/depth', 200);
    clock += 1_500;
    summary.stop();
    expect(lines[1][0]).toEqual({ fast_path: true, hits: 1, not_modified: 0, window_s: 1.5, by_key: { desk: 1 }, by_route: { '/v1/depth': 1 } });
    // Stopped: no timer left to write again.
    summary.count('desk', '/v1/depth', 200);
    vi.advanceTimersByTime(600_000);
    expect(lines).toHaveLength(2);
  });

  it('names at most 100 keys and routes a line and sums the rest under other', () => {
    const { logger, lines } = fakeLogger();
    const summary = createHitSummary(logger, 60_000);
    for (let i = 0; i < 150; i++) summary.count(`key-${i}`, '/v1/quotes', 200);
    summary.count('key-0', '/v1/quotes', 200);
    summary.stop();
    const byKey = lines[0][0].by_key as Record<string, number>;
    expect(Object.keys(byKey)).toHaveLength(101);
    expect(byKey['key-0']).toBe(2);
    expect(byKey.other).toBe(50);
    expect(lines[0][0].hits).toBe(151);
  });
});
