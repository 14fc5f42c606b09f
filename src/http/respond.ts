// The one way a /v1 data response is sent: finished bytes plus the headers that say what
// happened (X-Upstream, X-Simulated, X-Missing-Symbols, X-Failed-Symbols, X-Cache, X-Cache-Tier,
// Age), all read from the result's DataStatus. The response cache plugs in here.
//
// Table routes (spec.table) answer in the negotiated format (formats/negotiate.ts: `format` or
// Accept) and vary on Accept; candle answers cut short say so (X-Next-End-Time and Link on the
// single-symbol routes, X-Truncated-Symbols on the batch routes), in every format, and name any
// limit that made them shorter than `count` (X-Limited-By).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { cacheOutcome, type DataStatus } from '../data/status.ts';
import { MEDIA_TYPE, negotiateFormat, type Format } from './formats/negotiate.ts';
import type { Encoder } from './formats/offload.ts';
import type { TableKind } from './formats/tables.ts';

export interface Produced {
  /** The whole JSON body, `{data: …}`. */
  body: unknown;
  /** Symbols the vendor does not know (answers), in request order. */
  missing?: readonly string[];
  /** Symbols whose upstream failed: the answer is partial and is never stored. */
  failed?: readonly string[];
  /** What happened on the way: cache states, tiers, adapters, simulated data. */
  status: DataStatus;
  /** The answer was cut by `count`: the next, older page (single-symbol candle routes). */
  next?: { endTime: number; url: string };
  /** Symbols whose answer was cut by `count` (batch candle routes), request order. */
  truncated?: readonly string[];
  /** The limits that made the answer shorter than `count` (X-Limited-By), e.g. `base-bars; limit=120000`. */
  limits?: readonly string[];
  /** The next page's URL (Link rel="next") of a route paged by a cursor other than end_time (/v1/klines/market). */
  link?: string;
}

export interface ResponseSpec {
  /** Canonical request: route + normalised parameters, never the key. */
  key: string;
  /** Resource for TTL policy and metrics. */
  resource: string;
  /** The answer's table shape: the route negotiates json, csv, arrow or parquet. Absent: JSON only. */
  table?: TableKind;
}

export interface Responder {
  /** `produce` is told the negotiated format (a next page's Link keeps it); the body is format-free. */
  respond(request: FastifyRequest, reply: FastifyReply, spec: ResponseSpec, produce: (format: Format) => Promise<Produced>): Promise<FastifyReply>;
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
  /** X-Next-End-Time (epoch ms, as text) and the Link header of the next page. */
  nextEndTime?: string;
  link?: string;
  /** X-Truncated-Symbols. */
  truncated?: string;
  /** X-Limited-By: the limits that shortened the answer, comma-separated. */
  limitedBy?: string;
  /** Single-symbol candle routes: X-Forming-Bar (`stale` or `absent`). */
  forming?: string;
  /** Batch candle routes: X-Forming-Bar-Stale and X-Forming-Bar-Absent (symbols, request order). */
  formingStale?: string;
  formingAbsent?: string;
}

export function outcomeHeaders(produced: Produced, table?: TableKind): OutcomeHeaders {
  const status = produced.status;
  const stale = status.formingStale ?? [];
  const absent = status.formingAbsent ?? [];
  const forming = table === 'candles'
    ? (stale.length > 0 ? { forming: 'stale' } : absent.length > 0 ? { forming: 'absent' } : {})
    : { ...(stale.length > 0 ? { formingStale: stale.join(',') } : {}), ...(absent.length > 0 ? { formingAbsent: absent.join(',') } : {}) };
  return {
    ...forming,
    upstream: status.adapters.join(','),
    simulated: status.simulated,
    missing: missingHeader(produced.missing),
    failed: missingHeader(produced.failed),
    tier: status.miss ? undefined : status.tiers.join(',') || undefined,
    ...(produced.next === undefined ? {} : { nextEndTime: String(produced.next.endTime), link: `<${produced.next.url}>; rel="next"` }),
    ...(produced.link === undefined ? {} : { link: `<${produced.link}>; rel="next"` }),
    ...(produced.truncated !== undefined && produced.truncated.length > 0 ? { truncated: produced.truncated.join(',') } : {}),
    ...(produced.limits !== undefined && produced.limits.length > 0 ? { limitedBy: produced.limits.join(', ') } : {}),
  };
}

export function applyOutcomeHeaders(reply: FastifyReply, headers: OutcomeHeaders): void {
  reply.header('x-upstream', headers.upstream);
  if (headers.simulated) reply.header('x-simulated', 'true');
  if (headers.missing !== undefined) reply.header('x-missing-symbols', headers.missing);
  if (headers.failed !== undefined) reply.header('x-failed-symbols', headers.failed);
  if (headers.nextEndTime !== undefined) reply.header('x-next-end-time', headers.nextEndTime);
  if (headers.link !== undefined) reply.header('link', headers.link);
  if (headers.truncated !== undefined) reply.header('x-truncated-symbols', headers.truncated);
  if (headers.limitedBy !== undefined) reply.header('x-limited-by', headers.limitedBy);
  if (headers.forming !== undefined) reply.header('x-forming-bar', headers.forming);
  if (headers.formingStale !== undefined) reply.header('x-forming-bar-stale', headers.formingStale);
  if (headers.formingAbsent !== undefined) reply.header('x-forming-bar-absent', headers.formingAbsent);
}

/** The format a request gets: negotiated on table routes (a 400 for an unknown `format`), else JSON. */
export function formatFor(request: FastifyRequest, spec: ResponseSpec): Format {
  if (spec.table === undefined) return 'json';
  return negotiateFormat((request.query as Record<string, unknown> | undefined)?.format, request.headers.accept);
}

/** Vary of a route's answers: table routes choose the representation by Accept too. */
export function varyOf(spec: { table?: TableKind } | undefined): string {
  return spec?.table === undefined ? 'accept-encoding' : 'accept, accept-encoding';
}


export function contentTypeOf(format: Format): string {
  return MEDIA_TYPE[format];
}

/** Without a response cache: serialise once (large answers off the event loop, `encoder`) and send. */
export const directResponder = (encoder: Encoder): Responder => ({
  async respond(request, reply, spec, produce) {
    const format = formatFor(request, spec);
    const produced = await produce(format);
    const body = await encoder.encode(produced.body, format, spec.table);
    const headers = outcomeHeaders(produced, spec.table);
    applyOutcomeHeaders(reply, headers);
    if (headers.tier !== undefined) reply.header('x-cache-tier', headers.tier);
    if (spec.table !== undefined) reply.header('vary', varyOf(spec));
    return reply
      .header('content-type', contentTypeOf(format))
      .header('x-cache', cacheOutcome(produced.status))
      .header('age', String(Math.floor(produced.status.maxAgeMs / 1000)))
      .send(body);
  },
});
