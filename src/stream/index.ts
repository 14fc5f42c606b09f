// WebSocket streaming (/v1/ws/stream, /v1/ws/quotes). Placeholder: registered by buildApp.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../routes/context.ts';

export default async function streamRoutes(_app: FastifyInstance, _ctx: AppContext): Promise<void> {}
