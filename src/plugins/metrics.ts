// Metrics: the app's Prometheus registry and series (src/metrics.ts), given or created.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createMetrics, type Metrics } from '../metrics.ts';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

export const metricsPlugin = fp(async (app: FastifyInstance, options: { metrics?: Metrics }) => {
  const metrics = options.metrics ?? createMetrics();
  app.decorate('metrics', metrics);
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unknown';
    metrics.httpRequests.inc({ route, status: String(reply.statusCode) });
    metrics.httpRequestDuration.observe({ route }, reply.elapsedTime / 1000);
  });
}, { name: 'metrics' });
