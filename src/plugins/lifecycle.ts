// Lifecycle: refusing new requests while closing (503 SHUTTING_DOWN with Connection: close),
// draining connections within server.shutdownGraceMs on close, the request id on every answer,
// and the one error shape for every error and unknown route.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config/schema.ts';
import { AppError } from '../errors.ts';
import { drainWithin, trackConnections } from '../http/drain.ts';
import { installClientErrorHandling, sendError, toAppError } from '../http/error-handler.ts';
import { redactUrl } from '../http/redact.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Start refusing new requests with 503 SHUTTING_DOWN (graceful shutdown). */
    markClosing(): void;
    /** Whether the app is closing (marked, or app.close() called). */
    isClosing(): boolean;
  }
}

export const lifecyclePlugin = fp(async (app: FastifyInstance, options: { config: Config }) => {
  installClientErrorHandling(app);
  // app.close() is bounded by server.shutdownGraceMs: connections without a request in flight
  // close at once, the rest as their responses finish, and whatever is left at the deadline is
  // destroyed (registered first, so it runs before the stream's own preClose drain).
  const connections = trackConnections(app.server);
  app.addHook('preClose', (done) => {
    // Not listening (app.inject() only): no connections, and no 'close' event to stop the sweep.
    if (app.server.listening) drainWithin(app.server, connections, options.config.server.shutdownGraceMs, (open) => {
      app.log.warn({ connections: open }, 'shutdown grace over: closed connections still open');
    });
    done();
  });
  let closing = false;
  app.addHook('onClose', async () => {
    closing = true;
  });
  app.decorate('markClosing', () => {
    closing = true;
  });
  app.decorate('isClosing', () => closing);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', String(request.id));
    if (closing) {
      // Keep-alive clients must let go of the socket; in-flight ones are drained by app.close() (http/drain.ts).
      throw new AppError('SHUTTING_DOWN', 'the service is shutting down; retry on another instance', {
        retryAfterSeconds: 1,
        headers: { connection: 'close' },
      });
    }
  });

  app.setErrorHandler((error, request, reply) => sendError(request, reply, toAppError(error)));
  app.setNotFoundHandler((request, reply) => {
    sendError(request, reply, new AppError('NOT_FOUND', `no route ${request.method} ${redactUrl(request.url).split('?')[0]}`));
  });
}, { name: 'lifecycle' });
