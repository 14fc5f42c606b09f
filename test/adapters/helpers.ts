// Shared setup of the vendor adapter tests: the real http layer (src/upstream/http.ts) over global
// fetch, which msw intercepts; symbol refs; error capture.

import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { RequestHandler } from 'msw';
import { setupServer, type SetupServer } from 'msw/node';
import type { InvalidRowsEvent } from '../../adapters/types.ts';
import type { SymbolRef } from '../../src/domain.ts';
import { AppError } from '../../src/errors.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import { createUpstreamHttp, type UpstreamClient } from '../../src/upstream/http.ts';

const clients: UpstreamClient[] = [];

/** No retries (each test decides its own responses), a short deadline, a budget that never binds. */
export function testHttp(adapterId: string, options: { timeoutMs?: number; now?: () => number } = {}): UpstreamClient {
  const client = createUpstreamHttp({
    adapterId,
    timeoutMs: options.timeoutMs ?? 2_000,
    connections: 4,
    retry: { maxRetries: 0, baseDelayMs: 1 },
    budget: { max: 10_000, windowMs: 60_000 },
    ...(options.now ? { now: options.now } : {}),
  });
  clients.push(client);
  return client;
}

export async function closeTestHttp(): Promise<void> {
  await Promise.all(clients.splice(0).map((c) => c.close()));
}

export function ref(symbol: string): SymbolRef {
  const parsed = parseSymbol(symbol);
  if (!parsed) throw new Error(`bad test symbol ${symbol}`);
  return parsed;
}

export async function failure(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected a rejection');
}

/** Epoch ms of a Beijing / Hong Kong wall time (UTC+8, no DST). */
export function cnTime(date: string, hhmm = '00:00'): number {
  const [y, m, d] = date.split('-').map(Number);
  const [hh, mm] = hhmm.split(':').map(Number);
  return Date.UTC(y, m - 1, d, hh, mm) - 8 * 3_600_000;
}

/** Epoch ms of a New York wall time in summer (EDT, UTC−4). */
export function nyTime(date: string, hhmm = '00:00'): number {
  const [y, m, d] = date.split('-').map(Number);
  const [hh, mm] = hhmm.split(':').map(Number);
  return Date.UTC(y, m - 1, d, hh, mm) + 4 * 3_600_000;
}

/**
 * An msw server over `handlers` for the whole test file, reset after each test, and the
 * onInvalidRows events heard meanwhile (emptied after each test); `afterEachTest` resets the
 * file's own state too (captured requests, a clock). Call at module top level.
 */
export function vendorServer(handlers: RequestHandler[], afterEachTest?: () => void): { server: SetupServer; events: InvalidRowsEvent[] } {
  const server = setupServer(...handlers);
  const events: InvalidRowsEvent[] = [];
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterEach(async () => {
    server.resetHandlers();
    events.length = 0;
    afterEachTest?.();
    await closeTestHttp();
  });
  afterAll(() => server.close());
  return { server, events };
}
