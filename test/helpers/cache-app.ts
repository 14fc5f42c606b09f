// The real app on a counting sim adapter with a clock the test moves by hand: for cache, single-
// flight, batching and fault tests that must count upstream calls and step across TTLs.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/schema.ts';
import { createSimAdapter, type SimOptions } from '../../adapters/sim/index.ts';
import { SIM_INSTRUMENTS } from '../../adapters/sim/instruments.ts';
import type { Region } from '../../src/domain.ts';
import { buildTestApp, CN_MORNING, KEYS } from './app.ts';
import { fakeAdapter, type FakeAdapter, type FakeOptions } from './fake-adapter.ts';

export interface TestClock {
  t: number;
  now: () => number;
  advance(ms: number): void;
}

export function testClock(start = CN_MORNING): TestClock {
  const clock: TestClock = {
    t: start,
    now: () => clock.t,
    advance(ms) {
      clock.t += ms;
    },
  };
  return clock;
}

export interface CountingAppOptions {
  clock?: TestClock;
  configure?: (config: Config) => void;
  fake?: FakeOptions;
  sim?: SimOptions;
}

export async function buildCountingApp(options: CountingAppOptions = {}): Promise<{
  app: FastifyInstance; adapter: FakeAdapter; clock: TestClock; config: Config;
}> {
  const clock = options.clock ?? testClock();
  const adapter = fakeAdapter(createSimAdapter(options.sim ?? {}, { now: clock.now }), options.fake);
  const { app, config } = await buildTestApp({ now: clock.now, configure: options.configure, adapters: new Map([['sim', adapter]]) });
  return { app, adapter, clock, config };
}

/** The sim's symbols of one market, in table order. */
export function simSymbols(region: Region): string[] {
  return SIM_INSTRUMENTS.filter((i) => i.region === region).map((i) => i.symbol);
}

export function getWithKey(app: FastifyInstance, url: string, headers: Record<string, string> = {}, key: string = KEYS.demo) {
  return app.inject({ method: 'GET', url, headers: { 'x-api-key': key, ...headers } });
}

/** One sample of the Prometheus text from GET /metrics; undefined when the series is absent. */
export async function metricValue(app: FastifyInstance, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const res = await app.inject({ method: 'GET', url: '/metrics' });
  if (res.statusCode !== 200) throw new Error(`/metrics answered ${res.statusCode}`);
  for (const line of res.body.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const match = /^([^{\s]+)(?:\{([^}]*)\})?\s+(\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) found[pair[1]] = pair[2];
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return undefined;
}
