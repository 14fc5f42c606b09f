// The one way a /v1 data response is sent: finished bytes plus the headers that say what
// happened (X-Upstream, X-Simulated, X-Missing-Symbols, X-Failed-Symbols, X-Cache, X-Cache-Tier,
// Age), all read from the result's DataStatus. The response cache plugs in here.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { cacheOutcome, type DataStatus } from '../data/status.ts';

export interface Produced {
  /** The whole JSON body, `{data: …}`. */
  body: unknown;
  /** Symbols the vendor does not know (answers), in request order. */
  missing?: readonly string[];
  /** Symbols whose upstream failed: the answer is partial and is never stored. */
  failed?: readonly string[];
  /** What happened on the way: cache states, tiers, adapters, simulated data. */
  status: DataStatus;
}

export interface ResponseSpec {
  /** Canonical request: route + normalised parameters, never the key. */
  key: string;
  /** Resource for TTL policy and metrics. */
  resource: string;
}

export interface Responder {
  respond(request: FastifyRequest, reply: FastifyReply, spec: ResponseSpec, produce: () => Promise<Produced>): Promise<FastifyReply>;
}

function missingHeader(missing: readonly string[] | undefined): string | undefined {
  return missing !== undefined && missing.length > 0 ? missing.join(',') : undefined;
}

/** The headers every data response carries, whether built now or replayed from the cache. */
export interface OutcomeHeaders {
  upstream: string;
  simulated: boolean;
  missing: string | undefined;
  failed: string | undefined;
  /** Tier the data came from when it did not come from a vendor now (memory, redis, store). */
  tier: string | undefined;
}

export function outcomeHeaders(produced: Produced): OutcomeHeaders {
  const status = produced.status;
  return {
    upstream: status.adapters.join(','),
    simulated: status.simulated,
    missing: missingHeader(produced.missing),
    failed: missingHeader(produced.failed),
    tier: status.miss ? undefined : status.tiers.join(',') || undefined,
  };
}

export function applyOutcomeHeaders(reply: FastifyReply, headers: OutcomeHeaders): void {
  reply.header('x-upstream', headers.upstream);
  if (headers.simulated) reply.header('x-simulated', 'true');
  if (headers.missing !== undefined) reply.header('x-missing-symbols', headers.missing);
  if (headers.failed !== undefined) reply.header('x-failed-symbols', headers.failed);
}

/** Without a response cache: serialise once and send. */
export const directResponder: Responder = {
  async respond(_request, reply, _spec, produce) {
    const produced = await produce();
    const headers = outcomeHeaders(produced);
    applyOutcomeHeaders(reply, headers);
    if (headers.tier !== undefined) reply.header('x-cache-tier', headers.tier);
    return reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('x-cache', cacheOutcome(produced.status))
      .header('age', String(Math.floor(produced.status.maxAgeMs / 1000)))
      .send(JSON.stringify(produced.body));
  },
};
