// Shared setup for the history store tests: a tier on either backend (SQLite in a temp dir,
// PostgreSQL in a schema of its own, dropped afterwards), and the sim adapter as the vendor behind
// a wrapper that records every call.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import type { CandleQuery } from '../../adapters/types.ts';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { Candles, SymbolRef } from '../../src/domain.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import { createHistoryTier, type HistoryTier, type HistoryTierOptions } from '../../src/store/index.ts';
import { dropPostgresSchema } from '../../src/store/postgres.ts';

export const PG_URL = process.env.HISTORY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export type BackendName = 'sqlite' | 'postgres';

export function ref(symbol: string): SymbolRef {
  return parseSymbol(symbol) as SymbolRef;
}

export interface Clock {
  now: () => number;
  set(ms: number): void;
}

export function clock(start: number): Clock {
  let t = start;
  return { now: () => t, set: (ms) => { t = ms; } };
}

export interface Vendor {
  fetch: (q: CandleQuery) => Promise<Candles | undefined>;
  calls: CandleQuery[];
  /** Bars the vendor returned in total. */
  bars(): number;
  reset(): void;
}

/**
 * The deterministic sim adapter as the vendor; `mutate` may corrupt answers. One sim instance per
 * clock value: an instance whose clock moves forward has been seen to answer windows wrongly
 * (reported to the lead), and that is not what these tests are about.
 */
export function simVendor(now: () => number, mutate?: (c: Candles, q: CandleQuery) => Candles): Vendor {
  const sims = new Map<number, ReturnType<typeof createSimAdapter>>();
  const simAt = () => {
    const t = now();
    let sim = sims.get(t);
    if (sim === undefined) {
      sim = createSimAdapter({}, { now: () => t });
      sims.set(t, sim);
    }
    return sim;
  };
  const calls: CandleQuery[] = [];
  let bars = 0;
  return {
    calls,
    bars: () => bars,
    reset() {
      calls.length = 0;
      bars = 0;
    },
    async fetch(q) {
      calls.push(q);
      const out = await simAt().getCandles(q);
      if (out === undefined) return undefined;
      bars += out.timestamp.length;
      return mutate === undefined ? out : mutate(out, q);
    },
  };
}

export function direct(now: () => number) {
  const sim = createSimAdapter({}, { now });
  return (q: CandleQuery) => sim.getCandles(q);
}

/** A place for one backend's data: a temp SQLite file or a fresh PostgreSQL schema. */
export interface Place {
  backend: BackendName;
  options: Pick<HistoryTierOptions, 'backend' | 'sqlitePath' | 'databaseUrl' | 'postgresSchema'>;
  open(now: () => number, extra?: Partial<HistoryTierOptions>): Promise<HistoryTier>;
  dispose(): Promise<void>;
}

let serial = 0;

export function place(backend: BackendName): Place {
  serial += 1;
  const dir = backend === 'sqlite' ? mkdtempSync(join(tmpdir(), 'mdqs-history-')) : undefined;
  const schema = `hist_test_${process.pid}_${Date.now().toString(36)}_${serial}`;
  const options = backend === 'sqlite'
    ? { backend, sqlitePath: join(dir as string, 'history.sqlite') }
    : { backend, databaseUrl: PG_URL, postgresSchema: schema };
  return {
    backend,
    options,
    open: (now, extra = {}) => createHistoryTier({
      ...options,
      now,
      revision: { dailyBars: 2, minuteBars: 30 },
      retentionDays: { '1m': 0, '1d': 0 },
      registry: new Registry(),
      ...extra,
    }),
    async dispose() {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      else await dropPostgresSchema(PG_URL, schema);
    },
  };
}

/** Runs `work` and counts the turns the event loop took meanwhile (setImmediate callbacks that ran). */
export async function loopTurnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let ticking = true;
  const tick = () => {
    turns += 1;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return { result: await work(), turns };
  } finally {
    ticking = false;
  }
}
