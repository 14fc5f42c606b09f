// What every route plugin receives from buildApp.
import type { Redis } from 'ioredis';
import type { Config } from '../../config/schema.ts';
import type { KeyStore } from '../access/keys.ts';
import type { Responder } from '../http/respond.ts';
import type { Metrics } from '../metrics.ts';
import type { MarketDataService } from '../service/market-data.ts';

export interface RouteContext {
  service: MarketDataService;
  responder: Responder;
}

/** Everything a plugin (routes, stream, explorer) may use; never the environment. */
export interface AppContext extends RouteContext {
  config: Config;
  keys: KeyStore;
  metrics: Metrics;
  now: () => number;
  redis?: Redis;
}
