// The `adapters.tickflow` block (and any block with `type: tickflow`): options with bounds and
// defaults, and the vendor's HTTP defaults. Checked by the config loader (config/adapters.ts) at
// boot and by check-config; a leaf module, so checking loads no adapter code.
import { Type, type Static } from 'typebox';

export const TICKFLOW_DEFAULTS = {
  baseUrl: 'https://api.tickflow.org',
  maxBatch: 100,
  maxKlinePages: 20,
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
  /** Shares per vendor volume unit, per market (default CN 100, HK 1, US 1). */
  volumeMultiplier: Type.Optional(Type.Object({ CN: Multiplier, HK: Multiplier, US: Multiplier })),
  /** Whether TickFlow minute stamps mark bar ends (default) or starts. */
  minuteLabels: Type.Optional(Type.Union([Type.Literal('end'), Type.Literal('start')])),
  /** Cap on /v1/klines pages (10 000 bars each) for one unbounded candle query. */
  maxKlinePages: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: TICKFLOW_DEFAULTS.maxKlinePages })),
  /** paid or free (no real-time data, no minute bars); default free on free-api.tickflow.org. */
  tier: Type.Optional(Type.Union([Type.Literal('paid'), Type.Literal('free')])),
  label: Type.Optional(Type.String({ minLength: 1 })),
});

export type TickflowOptions = Static<typeof TICKFLOW_OPTIONS>;
