// Route tests of the data path: the real app (buildTestApp) over adapters composed here — `sim`
// and "vendors" that serve sim's data under another id (so they count as real) and fail on demand
// (test/helpers/fake-adapter.ts).
import { Writable } from 'node:stream';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { Adapter, AdapterCapabilities } from '../../adapters/types.ts';
import type { Config } from '../../config/schema.ts';
import type { DataEntry } from '../../src/data/loader.ts';
import type { Tier } from '../../src/cache/tier.ts';
import type { Region } from '../../src/domain.ts';
import { buildTestApp, CN_MORNING, KEYS } from '../helpers/app.ts';
import { fakeAdapter, type FakeAdapter } from '../helpers/fake-adapter.ts';

export { CN_MORNING, KEYS };

/** A fake vendor: sim's data under another id (so it counts as real); `caps` narrows what it declares. */
export type Vendor = FakeAdapter;

export function vendor(id: string, now: () => number, caps: Partial<AdapterCapabilities> = {}): Vendor {
  return fakeAdapter(createSimAdapter({}, { now }), { id, caps });
}

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface AppSetup {
  markets: Record<Region, string[]>;
  overrides?: Config['routing']['overrides'];
  adapters: Adapter[];
  now?: () => number;
  allowSimFallback?: boolean;
  strict?: boolean;
  breaker?: { failureThreshold: number; openMs: number };
  dataTiers?: Tier<DataEntry>[];
}

export interface TestApp {
  app: FastifyInstance;
  logs: LogLine[];
  get(url: string): Promise<LightMyRequestResponse>;
}

export async function appWith(setup: AppSetup): Promise<TestApp> {
  const logs: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const now = setup.now ?? (() => CN_MORNING);
  const { app } = await buildTestApp({
    now,
    adapters: new Map(setup.adapters.map((a) => [a.id, a])),
    logger: { level: 'warn', stream },
    dataTiers: setup.dataTiers,
    configure: (c) => {
      c.routing.markets = setup.markets;
      c.routing.overrides = setup.overrides ?? {};
      c.routing.allowSimFallback = setup.allowSimFallback ?? false;
      c.routing.strict = setup.strict ?? false;
      if (setup.breaker) c.upstream.breaker = setup.breaker;
    },
  });
  return {
    app,
    logs,
    get: (url) => app.inject({ method: 'GET', url, headers: { 'x-api-key': KEYS.demo } }),
  };
}

/** The symbols a data body holds, whether an array of items or a record by symbol. */
export function symbolsOf(body: { data: unknown }): string[] {
  const data = body.data;
  if (Array.isArray(data)) return data.map((item: { symbol: string }) => item.symbol);
  return Object.keys(data as Record<string, unknown>);
}
