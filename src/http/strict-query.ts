// Query strings are strict on the /v1 routes: a parameter the route does not know is a
// 400 UNKNOWN_PARAMETER naming it and the nearest known one (`cout=5` answered 200 with the default
// count before). `api_key` (the key, for clients that cannot send a header) and `_` (a cache
// buster) are known everywhere. One case rule: an enumeration whose values differ by more than
// case accepts any case (`format=CSV`, `adjust=Forward`); `period` stays case-sensitive, since `1m`
// (a minute) is not `1M` (a month). Symbols are normalised where they are parsed.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { nearest } from '../../config/load.ts';
import { AppError } from '../errors.ts';

/** Known on every route. */
const EVERYWHERE = ['api_key', '_'];
/**
 * Taken and ignored, as the TickFlow server does (its intraday routes answer today's session
 * whatever start_time/end_time say), so a client written against it works unchanged.
 */
const IGNORED: Record<string, readonly string[]> = {
  '/v1/klines/intraday': ['start_time', 'end_time'],
  '/v1/klines/intraday/batch': ['start_time', 'end_time'],
};
/** Parameters whose values are case-sensitive. */
const CASE_SENSITIVE = new Set(['period']);

interface PropertySchema {
  const?: unknown;
  enum?: unknown[];
  anyOf?: PropertySchema[];
}

/** The string values of an enumeration schema (a union of literals or an enum), else undefined. */
function enumValues(schema: PropertySchema | undefined): string[] | undefined {
  if (schema === undefined) return undefined;
  const values = schema.enum ?? schema.anyOf?.map((s) => s.const);
  return values !== undefined && values.length > 0 && values.every((v) => typeof v === 'string') ? values as string[] : undefined;
}

/** The one value of `values` equal to `given` but for case, when exactly one is. */
function caseless(values: readonly string[], given: string): string | undefined {
  const lower = given.toLowerCase();
  const matches = values.filter((v) => v.toLowerCase() === lower);
  return matches.length === 1 ? matches[0] : undefined;
}

/** preValidation hook of the /v1 routes (WebSocket upgrades excepted). */
export async function strictQuery(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  if (request.routeOptions.url?.startsWith('/v1/ws/') === true) return;
  const query = request.query as Record<string, unknown> | undefined;
  if (query === undefined || query === null || typeof query !== 'object') return;
  const schema = request.routeOptions.schema?.querystring as { properties?: Record<string, PropertySchema> } | undefined;
  const properties = schema?.properties ?? {};
  const known = [...Object.keys(properties), ...(IGNORED[request.routeOptions.url ?? ''] ?? []), ...EVERYWHERE];
  for (const name of Object.keys(query)) {
    if (known.includes(name)) continue;
    const guess = nearest(name, known.filter((k) => k !== '_'));
    throw new AppError('UNKNOWN_PARAMETER', `unknown parameter '${name}'${guess === undefined ? '' : `; did you mean '${guess}'?`} (this route takes ${known.filter((k) => k !== '_').join(', ')})`, {
      details: { parameter: name, ...(guess === undefined ? {} : { nearest: guess }) },
    });
  }
  for (const [name, property] of Object.entries(properties)) {
    const value = query[name];
    if (typeof value !== 'string' || CASE_SENSITIVE.has(name)) continue;
    const values = enumValues(property);
    if (values === undefined || values.includes(value)) continue;
    const match = caseless(values, value);
    if (match !== undefined) query[name] = match;
  }
}
