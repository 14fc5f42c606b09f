// The market explorer page at /explorer. Placeholder: registered by buildApp.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from './context.ts';

export default async function explorerRoutes(_app: FastifyInstance, _ctx: AppContext): Promise<void> {}
