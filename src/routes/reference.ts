// Reference routes: exchanges, calendar, market status. Placeholder: registered by buildApp.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from './context.ts';

export default async function referenceRoutes(_app: FastifyInstance, _ctx: AppContext): Promise<void> {}
