// The one way a /v1 data response is sent: finished bytes plus the headers that say what
// happened (X-Upstream, X-Missing-Symbols, X-Cache, Age). The response cache plugs in here.
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface Produced {
  /** The whole JSON body, `{data: …}`. */
  body: unknown;
  /** Unknown or failed symbols, in request order. */
  missing?: readonly string[];
  /** Adapter ids that answered. */
  upstreams: Iterable<string>;
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

export function missingHeader(missing: readonly string[] | undefined): string | undefined {
  return missing !== undefined && missing.length > 0 ? missing.join(',') : undefined;
}

/** Without a response cache: serialise once and send. */
export const directResponder: Responder = {
  async respond(_request, reply, _spec, produce) {
    const produced = await produce();
    const missing = missingHeader(produced.missing);
    if (missing !== undefined) reply.header('x-missing-symbols', missing);
    return reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('x-upstream', [...new Set(produced.upstreams)].join(','))
      .header('x-cache', 'MISS')
      .header('age', '0')
      .send(JSON.stringify(produced.body));
  },
};
