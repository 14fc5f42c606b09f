// What every route plugin receives from buildApp.
import type { MarketDataService } from '../service/market-data.ts';
import type { Responder } from '../http/respond.ts';

export interface RouteContext {
  service: MarketDataService;
  responder: Responder;
}
