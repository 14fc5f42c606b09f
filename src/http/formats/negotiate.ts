// Which representation a table route answers with (issue 26): `format=json|csv|arrow|parquet`
// (strict: anything else is 400 INVALID_PARAMETER naming the allowed values) or the Accept header
// (lenient: by q-value among the four media types; anything else, */* or text/plain gets JSON, so
// clients that send Accept: application/json, like TickFlow's, are untouched). The parameter wins.
// Errors are always JSON (the error handler never consults this). Nothing here loads a library:
// the encoders (encode.ts) are imported only when a non-JSON format is first asked for.
import { AppError } from '../../errors.ts';

export const FORMATS = ['json', 'csv', 'arrow', 'parquet'] as const;
export type Format = (typeof FORMATS)[number];

/** The media type each format is served as (Content-Type), and the ones Accept may name. */
export const MEDIA_TYPE: Record<Format, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
  arrow: 'application/vnd.apache.arrow.stream',
  parquet: 'application/vnd.apache.parquet',
};

const BY_MEDIA_TYPE: ReadonlyMap<string, Format> = new Map([
  ['application/json', 'json'],
  ['text/csv', 'csv'],
  ['application/vnd.apache.arrow.stream', 'arrow'],
  ['application/vnd.apache.parquet', 'parquet'],
]);

/** The `format` query parameter: undefined when absent; a 400 naming the allowed values otherwise. */
export function formatParam(raw: unknown): Format | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw === 'string' && (FORMATS as readonly string[]).includes(raw)) return raw as Format;
  const shown = typeof raw === 'string' ? `'${raw.length > 32 ? `${raw.slice(0, 32)}…` : raw}'` : 'given more than once';
  throw new AppError('INVALID_PARAMETER', `format must be one of ${FORMATS.join(', ')} (${shown} is not)`, {
    details: { parameter: 'format', allowed: [...FORMATS] },
  });
}

/**
 * The format an Accept header asks for: the highest q among the four media types (ties: the
 * earlier in the header); JSON when it names none of them with q > 0. Wildcards (`*\/*`,
 * `text/*`, `application/*`) never choose a columnar format.
 */
export function formatFromAccept(accept: string | undefined): Format {
  if (accept === undefined || accept === '' || accept === '*/*' || accept.startsWith('application/json')) {
    // The common cases, without a parse (the fast path asks on every hit). application/json first
    // in the header can only lose to a later type with a higher q, so look for a q to be sure.
    if (accept === undefined || !accept.includes('q=')) return 'json';
  }
  let best: Format = 'json';
  let bestQ = 0;
  for (const part of accept.split(',')) {
    const pieces = part.split(';');
    const type = pieces[0].trim().toLowerCase();
    const format = BY_MEDIA_TYPE.get(type);
    if (format === undefined) continue;
    let q = 1;
    for (let i = 1; i < pieces.length; i++) {
      const [name, value] = pieces[i].split('=');
      if (name?.trim().toLowerCase() === 'q' && value !== undefined) {
        const parsed = Number(value.trim());
        q = Number.isFinite(parsed) && parsed >= 0 && parsed <= 1 ? parsed : 0;
      }
    }
    if (q > bestQ) {
      bestQ = q;
      best = format;
    }
  }
  return best;
}

/** The negotiated format: the parameter (strict) when given, else the Accept header (lenient). */
export function negotiateFormat(param: unknown, accept: string | string[] | undefined): Format {
  return formatParam(param) ?? formatFromAccept(Array.isArray(accept) ? accept.join(',') : accept);
}

/** The cache key of one format of a canonical request (the response cache, the Redis tier, the fast path). */
export function keyWithFormat(key: string, format: Format): string {
  return `${key}|f=${format}`;
}

/** The format a response-cache key was stored for; undefined for routes that do not negotiate. */
export function formatOfKey(key: string): Format | undefined {
  const at = key.lastIndexOf('|f=');
  if (at < 0) return undefined;
  const format = key.slice(at + 3);
  return (FORMATS as readonly string[]).includes(format) ? format as Format : undefined;
}
