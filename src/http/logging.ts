// Logger options and request ids for buildApp. Keys never reach a log line (redact.ts).
import { randomUUID } from 'node:crypto';
import type { FastifyServerOptions, RawRequestDefaultExpression } from 'fastify';
import type { Config } from '../../config/schema.ts';
import { redactUrl } from './redact.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export function loggerOptions(config: Config): FastifyServerOptions['logger'] {
  return {
    level: config.log.level,
    serializers: {
      req: (req) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip }),
    },
    redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]', 'api_key', '*.api_key'], censor: '[redacted]' },
  };
}

/** A client's X-Request-Id when it is a sane token, else a new id. */
export function requestId(req: RawRequestDefaultExpression): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
