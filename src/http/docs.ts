// The OpenAPI document (@fastify/swagger) and its UI at /docs.
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { KeyStore } from '../access/keys.ts';

export const API_VERSION = '1.0.0';

export interface DocsOptions {
  keys: KeyStore;
}

export async function registerDocs(app: FastifyInstance, _options: DocsOptions): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Market Data Query Service',
        version: API_VERSION,
        description: 'One stable /v1 API for China A-share, Hong Kong and US market data. Send the key in X-API-Key (or api_key). Errors: {code, message, error, request_id, details?}.',
      },
      components: {
        securitySchemes: {
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
        },
      },
      security: [{ apiKeyHeader: [] }, { apiKeyQuery: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? json.title ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
}
