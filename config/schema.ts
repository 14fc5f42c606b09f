// The service configuration: one TypeBox schema, every number bounded, defaults in
// config/default.yaml (documented there). Loaded and validated once by config/load.ts.
import { Type, type Static } from 'typebox';

const Ms = (min: number, max: number) => Type.Integer({ minimum: min, maximum: max });
const Market = Type.Union([Type.Literal('CN'), Type.Literal('HK'), Type.Literal('US')]);
const Chain = Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 8 });

const TtlPair = Type.Object({ open: Ms(0, 86_400_000), closed: Ms(0, 604_800_000) });

export const ConfigSchema = Type.Object({
  server: Type.Object({
    host: Type.String({ minLength: 1 }),
    port: Type.Integer({ minimum: 0, maximum: 65_535 }),
    bodyLimitBytes: Type.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024 }),
    requestTimeoutMs: Ms(1000, 600_000),
    shutdownGraceMs: Ms(0, 120_000),
    trustProxy: Type.Boolean(),
    corsOrigins: Type.Array(Type.String()),
  }),
  log: Type.Object({
    level: Type.Union([
      Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'),
      Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent'),
    ]),
  }),
  keys: Type.Object({
    /** Path of the keys/plans YAML, relative to the working directory. */
    file: Type.String({ minLength: 1 }),
  }),
  routing: Type.Object({
    /** Ordered adapter chain per market; the next adapter is tried on failure or missing capability. */
    markets: Type.Object({ CN: Chain, HK: Chain, US: Chain }),
    /** Per-resource overrides: resource → market → chain. */
    overrides: Type.Record(Type.String(), Type.Partial(Type.Object({ CN: Chain, HK: Chain, US: Chain }))),
  }),
  /** Options per adapter id; the `sim` block is used by the embedded default. */
  adapters: Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown())),
  cache: Type.Object({
    dataMaxBytes: Type.Integer({ minimum: 1024 * 1024, maximum: 64 * 1024 * 1024 * 1024 }),
    responseMaxBytes: Type.Integer({ minimum: 1024 * 1024, maximum: 64 * 1024 * 1024 * 1024 }),
    /** Bodies above this size also get a gzip variant. */
    gzipMinBytes: Type.Integer({ minimum: 0, maximum: 1_048_576 }),
    ttl: Type.Object({
      quotes: TtlPair,
      depth: TtlPair,
      intradayMaxMs: Ms(0, 3_600_000),
      closedBarsMs: Ms(0, 30 * 86_400_000),
      referenceMs: Ms(0, 30 * 86_400_000),
      negativeMs: Ms(0, 86_400_000),
    }),
    staleIfError: Type.Object({
      quotesMs: Ms(0, 86_400_000),
      candlesMs: Ms(0, 30 * 86_400_000),
      referenceMs: Ms(0, 90 * 86_400_000),
    }),
    staleWhileRevalidate: Type.Object({
      quotesMs: Ms(0, 3_600_000),
      candlesMs: Ms(0, 86_400_000),
      referenceMs: Ms(0, 30 * 86_400_000),
    }),
  }),
  upstream: Type.Object({
    /** Deadline of one adapter call (HTTP vendors: covering retries), ms. */
    deadlineMs: Ms(50, 120_000),
    /** Concurrent calls per adapter. */
    concurrency: Type.Integer({ minimum: 1, maximum: 1024 }),
    breaker: Type.Object({
      /** Consecutive upstream failures that open an adapter's circuit. */
      failureThreshold: Type.Integer({ minimum: 1, maximum: 1000 }),
      /** How long an open circuit fails fast before probing, ms. */
      openMs: Ms(100, 3_600_000),
    }),
  }),
  redis: Type.Object({
    /** Empty: single instance, no Redis. */
    url: Type.String(),
  }),
  limits: Type.Object({
    /** Symbols per request when a plan does not set its own cap. */
    defaultMaxSymbols: Type.Integer({ minimum: 1, maximum: 10_000 }),
  }),
});

export type Config = Static<typeof ConfigSchema>;
export type MarketName = Static<typeof Market>;
