// Operational routes (no key): liveness, readiness, metrics, the OpenAPI document and metadata.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/schema.ts';
import { RESOURCES } from '../resources.ts';
import type { Metrics } from '../metrics.ts';
import { registerMetrics } from '../http/metrics-exposure.ts';
import type { Market } from '../domain.ts';
import type { ReadinessCheck } from '../health.ts';
import type { AdapterRouter } from '../upstream/router.ts';
import { budgetOf } from '../upstream/registry.ts';
import { Type } from 'typebox';
import { MALFORMED_REQUEST_RESPONSES } from './errors-doc.ts';

export type { ReadinessCheck };

const VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

/** A shared fault the instance degrades around, listed in /readyz's `degraded`. */
interface Degraded {
  name: string;
  problem: string;
  since?: string;
}

export interface OpsContext {
  router: AdapterRouter;
  now: () => number;
  config: Config;
  metrics: Metrics;
  /** Adapter ids whose data is simulated. */
  simulated: ReadonlySet<string>;
  isClosing(): boolean;
  readinessChecks?: ReadinessCheck[];
}

/** /readyz's markets: the routing's regions (China futures take the CN chain). */
const REGIONS: Market[] = ['CN', 'HK', 'US'];
/** /v1/meta's markets: the regions and CN_FUTURES. */
const MARKETS: Market[] = [...REGIONS, 'CN_FUTURES'];

const AdapterIds = (description: string) => Type.Object({
  CN: Type.Array(Type.String()), HK: Type.Array(Type.String()), US: Type.Array(Type.String()),
  CN_FUTURES: Type.Optional(Type.Array(Type.String({ description: 'China futures (plan market CN_FUTURES): the CN chain\'s adapters that serve them' }))),
}, { description });

const Meta = Type.Object({
  service: Type.String(),
  version: Type.String({ description: 'The running version of the service' }),
  simulated: Type.Boolean({ description: 'true: some market may be served simulated data (not real market data)' }),
  simulated_by_market: AdapterIds('Per market, the adapters of any resource chain that serve simulated data'),
  routing: AdapterIds('Per market, the adapter chain tried in order (routing.markets)'),
  adapters: Type.Array(Type.Object({
    id: Type.String(),
    label: Type.String(),
    markets: Type.Array(Type.String({ description: 'CN, HK, US' })),
  })),
  server_time: Type.Integer({ description: "The server's clock, epoch ms" }),
  recording: Type.Optional(Type.Array(Type.Object({
    job: Type.String({ description: 'The job id (history.record.jobs)' }),
    market: Type.String({ description: 'CN, HK, US or CN_FUTURES (a job\'s futures contracts)' }),
    day: Type.String({ format: 'date', description: 'The trading day of the last run' }),
    state: Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]),
    periods: Type.Array(Type.String()),
    members: Type.Integer(),
    done: Type.Integer({ description: 'Members recorded in every period (or already stored)' }),
    bars: Type.Record(Type.String(), Type.Integer(), { description: 'Closed bars recorded per base period' }),
    recorded: Type.Record(Type.String(), Type.Integer(), { description: 'Members recorded (or found stored) per base period' }),
    requests: Type.Integer({ description: 'Vendor requests for candles the run made' }),
    failures: Type.Record(Type.String(), Type.Integer(), { description: 'Member-periods not recorded, by reason; tried again later' }),
    unknown: Type.Integer({ description: 'Members the vendor does not know (delisted): not retried' }),
    beyond_window: Type.Record(Type.String(), Type.Integer(), { description: 'Members per period older than the vendor serves' }),
    started_at: Type.Integer({ description: 'Epoch ms' }),
    finished_at: Type.Optional(Type.Integer({ description: 'Epoch ms' })),
  }), { description: 'The last run of each recorder job per market (history.record), from the store: the same on every instance' })),
});

/** The vendor's outbound budget (issue 27): fleet-wide or this process's share, and what it did. */
function budgetBody(adapter: Parameters<typeof budgetOf>[0]): { budget?: Record<string, unknown> } {
  const budget = budgetOf(adapter);
  if (budget === undefined) return {};
  return {
    budget: {
      scope: budget.scope, max: budget.max, window_ms: budget.windowMs, remaining: budget.remaining,
      ...(budget.pausedUntil === undefined ? {} : { paused_until: new Date(budget.pausedUntil).toISOString() }),
      taken: budget.taken, waits: budget.waits, refused: budget.refused,
    },
  };
}
/** A probe (adapter.ready(), a readiness check) that has not answered by then counts as failed: /readyz never hangs. */
export const READY_PROBE_MS = 2_000;

const TIMED_OUT = Symbol('timed out');

/** `work`'s value, or TIMED_OUT once READY_PROBE_MS passed. */
function bounded<T>(work: Promise<T>): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), READY_PROBE_MS);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export default async function opsRoutes(app: FastifyInstance, ctx: OpsContext): Promise<void> {
  const publicRoute = { public: true, rateLimit: false } as const;

  app.get('/healthz', { config: publicRoute, schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'no-store').send({ status: 'ok' }));

  // The readiness policy: 503 only for this instance's own faults (starting, shutting down, its own
  // SQLite store failing). Faults every instance shares (a vendor's circuit open, even every
  // adapter of a market; Redis down; a shared PostgreSQL store unreachable) are listed in
  // `degraded` by name and since-when, and the instance stays ready: pulling every instance at once
  // for a vendor outage would turn stale quotes and stored history into no answer at all.
  app.get('/readyz', { config: publicRoute, schema: { hide: true } }, async (_request, reply) => {
    const adapters: Record<string, Record<string, unknown>> = {};
    const usable = new Set<string>();
    const degraded: Degraded[] = [];
    const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
    await Promise.all([...ctx.router.adapters.values()].map(async (adapter) => {
      let reachable = true;
      let timedOut = false;
      try {
        const answer = adapter.ready ? await bounded(adapter.ready()) : true;
        timedOut = answer === TIMED_OUT;
        reachable = answer === true;
      } catch {
        reachable = false;
      }
      const health = ctx.router.resilience(adapter.id)?.health();
      const circuit = health?.circuit ?? 'closed';
      if (reachable && circuit !== 'open') usable.add(adapter.id);
      const since = iso(health?.circuitSince);
      if (circuit !== 'closed') degraded.push({ name: `adapter:${adapter.id}`, problem: `circuit ${circuit}`, ...(since ? { since } : {}) });
      if (!reachable) degraded.push({ name: `adapter:${adapter.id}`, problem: timedOut ? 'ready probe did not answer' : 'ready probe failed' });
      adapters[adapter.id] = {
        ready: reachable && circuit === 'closed',
        circuit,
        ...(since ? { circuit_since: since } : {}),
        in_flight: health?.inFlight ?? 0,
        queued: health?.queued ?? 0,
        budget_remaining: health?.budgetRemaining ?? null,
        ...budgetBody(adapter),
        ...(timedOut ? { error: `ready probe did not answer within ${READY_PROBE_MS} ms` } : {}),
      };
    }));
    const markets: Record<string, { ready: boolean; adapters: string[] }> = {};
    let ready = !ctx.isClosing();
    for (const market of REGIONS) {
      const chain = ctx.router.configuredChain('quotes', market);
      const serving = chain.filter((id) => usable.has(id));
      markets[market] = { ready: serving.length > 0, adapters: serving };
      if (serving.length === 0) degraded.push({ name: `market:${market}`, problem: 'no adapter with a closed circuit: live data stale or 503, stored history still served' });
    }
    const extra: Record<string, unknown> = {};
    for (const check of ctx.readinessChecks ?? []) {
      const result = await bounded(check.run()).catch((error: unknown) => ({ ready: false, detail: { error: String(error) }, degraded: undefined }));
      const settled = result === TIMED_OUT ? { ready: false, detail: { error: `check did not answer within ${READY_PROBE_MS} ms` }, degraded: undefined } : result;
      extra[check.name] = settled.detail;
      if (!settled.ready) ready = false;
      if (settled.degraded !== undefined) {
        const since = iso(settled.degraded.since);
        degraded.push({ name: check.name, problem: settled.degraded.problem, ...(since ? { since } : {}) });
      }
    }
    degraded.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return reply.code(ready ? 200 : 503).header('cache-control', 'no-store')
      .send({ status: ready ? (degraded.length > 0 ? 'degraded' : 'ready') : 'not_ready', markets, adapters, ...extra, ...(degraded.length > 0 ? { degraded } : {}) });
  });

  // Loopback only, a bearer token, or an own listener (metrics.token, metrics.port: http/metrics-exposure.ts).
  registerMetrics(app, { registry: ctx.metrics.registry, config: ctx.config });

  app.get('/v1/openapi.json', { config: publicRoute, schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(app.swagger())));

  app.get('/v1/meta', {
    config: publicRoute,
    schema: {
      operationId: 'getMeta',
      summary: 'Service metadata: version, adapters per market, which may serve simulated data',
      tags: ['ops'],
      security: [],
      response: { 200: Type.Object({ data: Meta }), ...MALFORMED_REQUEST_RESPONSES },
    },
  }, async () => {
    const routing = ctx.config.routing.markets;
    const adapters = [...ctx.router.adapters.values()].map((a) => ({ id: a.id, label: a.label, markets: a.capabilities.markets }));
    // Per market: the adapters of any resource's chain that serve simulated data.
    const simulatedBy: Record<string, string[]> = {};
    for (const market of MARKETS) {
      const ids = new Set<string>();
      for (const resource of RESOURCES) {
        for (const id of ctx.router.configuredChain(resource, market)) if (ctx.simulated.has(id)) ids.add(id);
      }
      simulatedBy[market] = [...ids];
    }
    return {
      data: {
        service: 'market-data-query-service',
        version: VERSION,
        simulated: Object.values(simulatedBy).some((ids) => ids.length > 0),
        simulated_by_market: simulatedBy,
        routing,
        adapters,
        server_time: ctx.now(),
        ...(app.recorder === undefined ? {} : { recording: await app.recorder.lastRuns().catch(() => []) }),
      },
    };
  });
}
