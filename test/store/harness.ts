// Shared setup for the history store tests: a tier on either backend (SQLite in a temp dir,
// PostgreSQL in a schema of its own, dropped afterwards), backends driven directly, generated
// minute bars, and the sim adapter as the vendor behind a wrapper that records every call.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll } from 'vitest';
import type { CandleQuery } from '../../adapters/types.ts';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { Candles, SymbolRef } from '../../src/domain.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';
import type { Backend } from '../../src/store/backend.ts';
import { openHistoryStore, type HistoryStore, type HistoryStoreOptions } from '../../src/store/index.ts';
import { dropPostgresSchema, openPostgresBackend } from '../../src/store/postgres.ts';
import { openSqliteBackend } from '../../src/store/sqlite.ts';

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
  options: Pick<HistoryStoreOptions, 'backend' | 'sqlitePath' | 'databaseUrl' | 'postgresSchema'>;
  open(now: () => number, extra?: Partial<HistoryStoreOptions>): Promise<HistoryStore>;
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
    open: (now, extra = {}) => openHistoryStore({
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

export interface DirectBackends {
  /** The temp directory (SQLite files, and whatever else the test file keeps there). */
  dir: string;
  /** A backend named `name`: `<dir>/<name>.sqlite`, or the PostgreSQL schema `<prefix>_test_<pid>_<name>` (dropped first). */
  open(kind: BackendName, name: string): Promise<{ backend: Backend; sqliteFile?: string; schema?: string }>;
}

/** Backends driven directly (no tier); the temp directory and the schemas go after the test file's tests. */
export function directBackends(prefix: string): DirectBackends {
  const dir = mkdtempSync(join(tmpdir(), `mdqs-${prefix}-`));
  const schemas: string[] = [];
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    for (const s of schemas) await dropPostgresSchema(PG_URL, s);
  });
  return {
    dir,
    async open(kind, name) {
      if (kind === 'sqlite') {
        const sqliteFile = join(dir, `${name}.sqlite`);
        return { backend: openSqliteBackend(sqliteFile), sqliteFile };
      }
      const schema = `${prefix}_test_${process.pid}_${name}`;
      schemas.push(schema);
      await dropPostgresSchema(PG_URL, schema);
      return { backend: await openPostgresBackend(PG_URL, schema), schema };
    },
  };
}

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 5, 1, 31);

/**
 * `days` days of `perDay` one-minute bars from 01:31 UTC on 2026-01-05, prices derived from the
 * index (quarters, so in thousandths they fit the compact int32 form), `shift` added to each.
 */
export function minuteBars(days: number, perDay: number, shift = 0): Candles {
  const c: Candles = { timestamp: [], open: [], high: [], low: [], close: [], volume: [], amount: [], prev_close: [] };
  for (let d = 0; d < days; d++) {
    for (let m = 0; m < perDay; m++) {
      const i = c.timestamp.length;
      const px = 100 + ((i * 7) % 50) / 4 + shift;
      c.timestamp.push(T0 + d * DAY + m * 60_000);
      c.open.push(px);
      c.high.push(px + 1);
      c.low.push(px - 1);
      c.close.push(px + 0.5);
      c.volume.push(1000 + i);
      c.amount.push((1000 + i) * px);
      c.prev_close!.push(px - 0.5);
    }
  }
  return c;
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
