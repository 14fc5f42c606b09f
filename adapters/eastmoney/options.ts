// The `adapters.eastmoney` block (and any block with `type: eastmoney`): options with bounds and
// defaults, and the vendor's HTTP defaults. Checked by the config loader (config/adapters.ts) at
// boot and by check-config; a leaf module, so checking loads no adapter code.
import { Type, type Static } from 'typebox';

export const EASTMONEY_DEFAULTS = {
  maxBatch: 50,
  concurrency: 3,
  hostCooldownMs: 60_000,
  usMarketCacheSize: 5000,
  userAgent: 'Mozilla/5.0 (compatible; mdqs/1.0)',
} as const;

/** The HTTP layer's defaults for Eastmoney (`adapters.eastmoney.http` overrides each). */
export const EASTMONEY_HTTP = { timeoutMs: 5000, connections: 8, budget: { max: 300, windowMs: 60_000 } } as const;

const Hosts = Type.Optional(Type.Array(Type.String({ pattern: '^https?://[^\\s/]+' }), { minItems: 1, maxItems: 32 }));
const Multiplier = Type.Optional(Type.Number({ minimum: 0.0001, maximum: 1_000_000 }));

export const EASTMONEY_OPTIONS = Type.Object({
  /** push2 mirrors, tried in order; a throttling host cools down and the next one serves. */
  quoteHosts: Hosts,
  /** push2his mirrors (klines). */
  historyHosts: Hosts,
  /** datacenter-web hosts (dividend and rights-issue tables). */
  datacenterHosts: Hosts,
  /** datacenter F10 hosts (HK dividend table); default https://datacenter.eastmoney.com. */
  f10Hosts: Hosts,
  ut: Type.Optional(Type.String({ minLength: 1 })),
  userAgent: Type.Optional(Type.String({ minLength: 1, default: EASTMONEY_DEFAULTS.userAgent })),
  /** Symbols per ulist call. */
  maxBatch: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: EASTMONEY_DEFAULTS.maxBatch })),
  /** Known US market numbers, canonical ticker → 105 | 106 | 107; others are looked up once. */
  usMarkets: Type.Optional(Type.Record(Type.String(), Type.Union([Type.Literal(105), Type.Literal(106), Type.Literal(107)]))),
  /** Bound of the per-instance US market cache. */
  usMarketCacheSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: EASTMONEY_DEFAULTS.usMarketCacheSize })),
  /** Per-symbol calls in flight within one batch call (depth, instruments, ex-factors). */
  concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 64, default: EASTMONEY_DEFAULTS.concurrency })),
  /** How long a throttling host is skipped, ms. */
  hostCooldownMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 3_600_000, default: EASTMONEY_DEFAULTS.hostCooldownMs })),
  /** Shares per vendor volume unit, per market (default CN 100, HK 1, US 1). */
  volumeMultiplier: Type.Optional(Type.Object({ CN: Multiplier, HK: Multiplier, US: Multiplier })),
  label: Type.Optional(Type.String({ minLength: 1 })),
});

export type EastmoneyOptions = Static<typeof EASTMONEY_OPTIONS>;
