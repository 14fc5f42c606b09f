// The `adapters.tickflow` block (and any block with `type: tickflow`): options with bounds and
// defaults, and the vendor's HTTP defaults. Checked by the config loader (config/adapters.ts) at
// boot and by check-config; a leaf module, so checking loads no adapter code.
import { Type, type Static } from 'typebox';

export const TICKFLOW_DEFAULTS = {
  baseUrl: 'https://api.tickflow.org',
  maxBatch: 100,
  maxKlinePages: 20,
  /** The official client waits 3 s before reconnecting its stream. */
  pushReconnectMs: 3000,
} as const;

/** The HTTP layer's defaults for TickFlow (`adapters.tickflow.http` overrides each). */
export const TICKFLOW_HTTP = { timeoutMs: 8000, connections: 16, budget: { max: 600, windowMs: 60_000 } } as const;

const Multiplier = Type.Optional(Type.Number({ minimum: 0.0001, maximum: 1_000_000 }));

export const TICKFLOW_OPTIONS = Type.Object({
  /** The keyless free tier is https://free-api.tickflow.org. */
  baseUrl: Type.Optional(Type.String({ pattern: '^https?://[^\\s/]+', default: TICKFLOW_DEFAULTS.baseUrl })),
  /** Sent as `x-api-key`; omit (or "") for the keyless free tier. */
  apiKey: Type.Optional(Type.String()),
  /** Symbols per native batch call (the official client uses 100). */
  maxBatch: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: TICKFLOW_DEFAULTS.maxBatch })),
  /** Shares per vendor volume unit, per market (default CN 100, HK 1, US 1); CN_FUTURES: contracts per unit (default 1). */
  volumeMultiplier: Type.Optional(Type.Object({ CN: Multiplier, HK: Multiplier, US: Multiplier, CN_FUTURES: Multiplier })),
  /** Whether TickFlow minute stamps mark bar ends (default) or starts. */
  minuteLabels: Type.Optional(Type.Union([Type.Literal('end'), Type.Literal('start')])),
  /** Cap on /v1/klines pages (10 000 bars each) for one unbounded candle query. */
  maxKlinePages: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: TICKFLOW_DEFAULTS.maxKlinePages })),
  /** paid or free (no real-time data, no minute bars); default free on free-api.tickflow.org. */
  tier: Type.Optional(Type.Union([Type.Literal('paid'), Type.Literal('free')])),
  label: Type.Optional(Type.String({ minLength: 1 })),
  /**
   * The stream subscribes to quotes and depth on the vendor's push feed (`/v1/ws/stream`) instead
   * of polling them, falling back to polling while the feed is down. Default true on the paid
   * tier; the free tier has no real-time data.
   */
  push: Type.Optional(Type.Boolean()),
  /** First wait before reconnecting a lost push feed, ms (doubles to 30 s while it stays down). Default 3000. */
  pushReconnectMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 60_000 })),
});

export type TickflowOptions = Static<typeof TICKFLOW_OPTIONS>;
