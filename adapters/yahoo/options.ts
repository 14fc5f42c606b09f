// The `adapters.yahoo` block (and any block with `type: yahoo`): options with bounds and
// defaults, and the vendor's HTTP defaults. Checked by the config loader (config/adapters.ts) at
// boot and by check-config; a leaf module, so checking loads no adapter code.
import { Type, type Static } from 'typebox';

export const YAHOO_DEFAULTS = {
  baseUrl: 'https://query2.finance.yahoo.com',
  maxBatch: 10,
  concurrency: 3,
  minuteDaysPerRequest: 7,
  minuteLookbackDays: 29,
  userAgent: 'Mozilla/5.0 (compatible; mdqs/1.0)',
} as const;

/** The HTTP layer's defaults for Yahoo (`adapters.yahoo.http` overrides each); keyless, it throttles early. */
export const YAHOO_HTTP = { timeoutMs: 8000, connections: 8, budget: { max: 120, windowMs: 60_000 } } as const;

export const YAHOO_OPTIONS = Type.Object({
  /** query1 also works. */
  baseUrl: Type.Optional(Type.String({ pattern: '^https?://[^\\s/]+', default: YAHOO_DEFAULTS.baseUrl })),
  /** Symbols per adapter call; Yahoo's chart is per symbol, so calls fan out (`concurrency`). */
  maxBatch: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: YAHOO_DEFAULTS.maxBatch })),
  concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 64, default: YAHOO_DEFAULTS.concurrency })),
  /** 1m requests span at most this many days (Yahoo refuses more than 7). */
  minuteDaysPerRequest: Type.Optional(Type.Integer({ minimum: 1, maximum: 7, default: YAHOO_DEFAULTS.minuteDaysPerRequest })),
  /** 1m data reaches back this many days (Yahoo: about 30). */
  minuteLookbackDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 60, default: YAHOO_DEFAULTS.minuteLookbackDays })),
  userAgent: Type.Optional(Type.String({ minLength: 1, default: YAHOO_DEFAULTS.userAgent })),
  label: Type.Optional(Type.String({ minLength: 1 })),
});

export type YahooOptions = Static<typeof YAHOO_OPTIONS>;
