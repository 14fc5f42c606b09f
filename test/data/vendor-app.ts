// Route tests of the data path: the real app (buildTestApp) over adapters composed here — `sim`
// and "vendors" that serve sim's data under another id (so they count as real) and fail on demand.
import { Writable } from 'node:stream';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import type { Adapter, AdapterCapabilities, CallContext } from '../../adapters/types.ts';
import type { Config } from '../../config/schema.ts';
import type { DataEntry } from '../../src/data/loader.ts';
import type { Tier } from '../../src/cache/tier.ts';
import type { Region } from '../../src/domain.ts';
import { buildTestApp, CN_MORNING, KEYS } from '../helpers/app.ts';
import type { Method } from './fakes.ts';

export { CN_MORNING, KEYS };

export interface Vendor extends Adapter {
  readonly calls: Array<{ method: Method; symbols: string[] }>;
  /** A call touching one of these symbols throws the mapped error. */
  readonly failing: Map<string, unknown>;
  /** Every call throws this while set. */
  failAll: unknown;
  /** Symbols asked of `method`, in call order. */
  symbolsOf(method: Method): string[];
}

/** Sim's data under another id; `caps` narrows what it declares. */
export function vendor(id: string, now: () => number, caps: Partial<AdapterCapabilities> = {}): Vendor {
  const sim = createSimAdapter({}, { now });
  const calls: Vendor['calls'] = [];
  const enter = (method: Method, symbols: string[]) => {
    calls.push({ method, symbols });
    if (self.failAll !== undefined) throw self.failAll;
    for (const s of symbols) if (self.failing.has(s)) throw self.failing.get(s);
  };
  const self: Vendor = {
    id,
    label: id,
    capabilities: { ...sim.capabilities, ...caps },
    calls,
    failing: new Map(),
    failAll: undefined,
    symbolsOf: (method) => calls.filter((c) => c.method === method).flatMap((c) => c.symbols),
    async getQuotes(refs, ctx?: CallContext) {
      enter('getQuotes', refs.map((r) => r.symbol));
      return sim.getQuotes(refs, ctx);
    },
    async getDepth(refs, ctx) {
      enter('getDepth', refs.map((r) => r.symbol));
      return sim.getDepth(refs, ctx);
    },
    async getInstruments(refs, ctx) {
      enter('getInstruments', refs.map((r) => r.symbol));
      return sim.getInstruments(refs, ctx);
    },
    async getExFactors(refs, ctx) {
      enter('getExFactors', refs.map((r) => r.symbol));
      return sim.getExFactors(refs, ctx);
    },
    async getCandles(query, ctx) {
      enter('getCandles', [query.symbol.symbol]);
      return sim.getCandles(query, ctx);
    },
    async getIntraday(ref, ctx) {
      enter('getIntraday', [ref.symbol]);
      return sim.getIntraday(ref, ctx);
    },
    async listPool(pool, ctx) {
      enter('listPool', [pool]);
      return sim.listPool(pool, ctx);
    },
  };
  return self;
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
