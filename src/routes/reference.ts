// Reference routes: exchanges (TickFlow's), the trading calendar and the market clock.
import type { FastifyInstance } from 'fastify';
import calendarRoutes from './calendar.ts';
import type { AppContext } from './context.ts';
import exchangeRoutes from './exchanges.ts';
import marketStatusRoutes from './market-status.ts';

export default async function referenceRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await exchangeRoutes(app, ctx);
  await calendarRoutes(app, ctx);
  await marketStatusRoutes(app, ctx);
}
