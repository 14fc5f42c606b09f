// The service configuration: one TypeBox schema, every number bounded, defaults in
// config/default.yaml (documented there). Loaded and validated once by config/load.ts.
import { Type, type Static } from 'typebox';

const Ms = (min: number, max: number) => Type.Integer({ minimum: min, maximum: max });
const Chain = Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 8 });

/** "host:port" (a name or IPv4) or "[IPv6]:port". */
const HostPort = Type.String({ pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[^\\s:\\[\\]]+):[0-9]{1,5}$' });

const TtlPair = Type.Object({ open: Ms(0, 86_400_000), closed: Ms(0, 604_800_000) });

export const ConfigSchema = Type.Object({
  server: Type.Object({
    host: Type.String({ minLength: 1 }),
    port: Type.Integer({ minimum: 0, maximum: 65_535 }),
    bodyLimitBytes: Type.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024 }),
    requestTimeoutMs: Ms(1000, 600_000),
    shutdownGraceMs: Ms(0, 120_000),
    /**
     * Which peers are proxies whose X-Forwarded-For is believed (config/trust-proxy.ts): false; the
     * proxies' addresses or CIDRs (a list or a comma-separated string); a number of hops; or true
     * (every peer: safe only behind a proxy that overwrites the header).
     */
    trustProxy: Type.Union([
      Type.Boolean(),
      Type.Integer({ minimum: 0, maximum: 16 }),
      Type.String({ minLength: 1 }),
      Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 64 }),
    ]),
    /** Worker processes on one port (node:cluster); > 1 needs Redis (redis.url, redis.cluster or redis.sentinel). Default 1. */
    workers: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
    /** Pid file to signal (kill -HUP $(cat file)); empty: none. Default none. */
    pidFile: Type.Optional(Type.String()),
    /**
     * CORS for browser apps on other origins (@fastify/cors): off while `origins` is empty. Each
     * entry is an exact origin (`https://dash.example.com`), `*` (any origin), or a pattern where
     * `*` stands for one or more host labels (`https://*.example.com`).
     */
    cors: Type.Optional(Type.Object({
      origins: Type.Array(Type.String({ minLength: 1, pattern: '^(\\*|https?://[^/\\s]+)$' }), { maxItems: 64 }),
    })),
    /** V8's memory-saver mode above resident size at listen + the cache bounds + this (src/cli/memory-saver.ts); 0: never. */
    memorySaverHeadroomBytes: Type.Integer({ minimum: 0, maximum: 64 * 1024 * 1024 * 1024 }),
    /**
     * V8's heap growing percent while the memory saver is on (src/cli/memory-saver.ts): the next
     * full GC when the heap reaches (1 + this/100) × what the last one kept. 0: V8's own factor for
     * memory-reducing GCs. Under the line MDQS_HEAP_GROWING_PERCENT applies again.
     */
    memorySaverHeapGrowingPercent: Type.Integer({ minimum: 0, maximum: 1000 }),
  }),
  log: Type.Object({
    level: Type.Union([
      Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'),
      Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent'),
    ]),
    /**
     * Cache hits answered by the fast path: 'summary' (default) logs each at debug and, at info, one
     * `cache hits` line per hitSummaryMs with their counts by key, route and status; 'lines' logs
     * each at info, as every other request (no logging at info on the hot path).
     */
    hits: Type.Optional(Type.Union([Type.Literal('summary'), Type.Literal('lines')])),
    /** How often the `cache hits` summary line is written (when there were any), ms. Default 60 s. */
    hitSummaryMs: Type.Optional(Ms(1000, 3_600_000)),
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
    /** sim may follow a real vendor in a chain only when this is true (its answers say X-Simulated). */
    allowSimFallback: Type.Optional(Type.Boolean()),
    /** A market × resource that no adapter in its chain can serve: boot error instead of a warning. */
    strict: Type.Optional(Type.Boolean()),
  }),
  /** Options per adapter id; the `sim` block is used by the embedded default. */
  adapters: Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown())),
  cache: Type.Object({
    dataMaxBytes: Type.Integer({ minimum: 1024 * 1024, maximum: 64 * 1024 * 1024 * 1024 }),
    responseMaxBytes: Type.Integer({ minimum: 1024 * 1024, maximum: 64 * 1024 * 1024 * 1024 }),
    /** Bodies above this size also get a gzip variant. */
    gzipMinBytes: Type.Integer({ minimum: 0, maximum: 1_048_576 }),
    /** Issue 15 item 4: byte budget of the exchange calendar's per-day memos (0: no memo). */
    calendarMemoMaxBytes: Type.Optional(Type.Integer({ minimum: 0, maximum: 1024 * 1024 * 1024 })),
    ttl: Type.Object({
      quotes: TtlPair,
      depth: TtlPair,
      intradayMaxMs: Ms(0, 3_600_000),
      closedBarsMs: Ms(0, 30 * 86_400_000),
      referenceMs: Ms(0, 30 * 86_400_000),
      /** Financial statements: a symbol's whole series per statement (issue 25). */
      financialsMs: Ms(0, 30 * 86_400_000),
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
    /** One Redis node; empty: unset (with no cluster or sentinel either: single instance, no Redis). */
    url: Type.String(),
    /** The startup nodes of a Redis Cluster ("host:port"); instead of url or sentinel. */
    cluster: Type.Optional(Type.Array(HostPort, { minItems: 1, maxItems: 64 })),
    /** Sentinel: the master's name and the sentinels ("host:port"); instead of url or cluster. */
    sentinel: Type.Optional(Type.Object({
      name: Type.String({ minLength: 1 }),
      nodes: Type.Array(HostPort, { minItems: 1, maxItems: 16 }),
      /** The sentinels' own password (requirepass in sentinel.conf), when they have one. */
      password: Type.Optional(Type.String()),
    })),
    /** ACL user of the cluster's or the master's nodes (with redis.url: in the URL instead). */
    username: Type.Optional(Type.String()),
    /** Password of the cluster's or the master's nodes (MDQS__redis__password; with redis.url: in the URL instead). */
    password: Type.Optional(Type.String()),
    /**
     * Instances sharing this Redis: while it is down each one admits rate limit ÷ instances, and
     * each process keeps max ÷ (instances × server.workers) of every vendor's outbound budget
     * (with Redis the budget holds for the whole fleet). Default 1.
     */
    instances: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024 })),
    /** A Redis command not answered within this many ms counts as a failure (frozen Redis). Default 250. */
    commandTimeoutMs: Type.Optional(Ms(10, 10_000)),
    /**
     * The cross-instance fill lock's lease, ms: renewed every third of it while the holder works, so a
     * dead holder's lock lapses within one lease and a waiter fills itself. Default 1000.
     */
    fillLockLeaseMs: Type.Optional(Ms(200, 30_000)),
    /** Renamed redis.fillLockLeaseMs (it was a lifetime, now a renewed lease): refused, naming the new setting. */
    fillLockMs: Type.Optional(Type.Never({ description: 'nothing: renamed redis.fillLockLeaseMs (the fill lock\'s lease, renewed while its holder works; default 1000 ms)' })),
  }),
  auth: Type.Optional(Type.Object({
    /** Failed authentications (wrong key) per client address per minute; then 429. Default 30. */
    failuresPerMinute: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
  })),
  /**
   * Who may read /metrics (it names every key id and its traffic). Default: on the API port, for
   * loopback clients only. `token`: clients elsewhere send `Authorization: Bearer <token>`.
   * `port` (and `host`): an own listener for /metrics, which then leaves the API port.
   */
  metrics: Type.Optional(Type.Object({
    /** Bearer token for /metrics from beyond loopback; empty: loopback clients only. */
    token: Type.Optional(Type.String()),
    /** Own listener for /metrics (0 picks a free port); unset: /metrics on the API port. */
    port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65_535 })),
    /** Address of the own listener; empty: the API's address. */
    host: Type.Optional(Type.String()),
  })),
  /** Candle history store (src/store/): raw closed 1m/1d bars fetched from each vendor once. */
  history: Type.Optional(Type.Object({
    /** Off: candles go to the vendor as before. Default true. */
    enabled: Type.Optional(Type.Boolean()),
    /** sqlite (embedded file, default) or postgres (DATABASE_URL; shared by several instances). */
    backend: Type.Optional(Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')])),
    /** SQLite file; its directory is created. Default data/history.sqlite. */
    sqlitePath: Type.Optional(Type.String({ minLength: 1 })),
    /** PostgreSQL URL for `backend: postgres`; from DATABASE_URL (a password has no place in a file). */
    databaseUrl: Type.Optional(Type.String()),
    /** PostgreSQL schema holding the store's tables (several deployments on one database). Default mdqs_history. */
    postgresSchema: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]{0,62}$' })),
    /** Days of bars kept per base period; 0 keeps forever. Defaults 1m: 60, 1d: 0. */
    retentionDays: Type.Optional(Type.Object({
      '1m': Type.Optional(Type.Integer({ minimum: 0, maximum: 36_500 })),
      '1d': Type.Optional(Type.Integer({ minimum: 0, maximum: 36_500 })),
    })),
    /** Newest closed bars re-fetched once after the next session close. Defaults 2 and 30. */
    revision: Type.Optional(Type.Object({
      dailyBars: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
      minuteBars: Type.Optional(Type.Integer({ minimum: 0, maximum: 2400 })),
    })),
    /** Adapter ids whose candles bypass the store. */
    disabledAdapters: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    /** `history warm`: an extra pause between vendor calls, ms, on top of the vendor's budget. Default 0. */
    warmPauseMs: Type.Optional(Ms(0, 60_000)),
    /** The recorder (src/recorder/): jobs whose members' closed bars are recorded after each close. */
    record: Type.Optional(Type.Object({
      /** Minutes after a market's close before its day is recorded (late prints settle). Default 20. */
      delayMinutes: Type.Optional(Type.Integer({ minimum: 0, maximum: 720 })),
      /** On start, missed trading days up to this many back are caught up (what the vendor still serves). Default 10. */
      catchUpDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 3650 })),
      /** The recorder waits while less than this share of a vendor's request budget is left (users keep it). Default 0.2. */
      budgetReserve: Type.Optional(Type.Number({ minimum: 0, maximum: 0.9 })),
      /** Member-days recorded at once per job (each one vendor call per period; the lane caps them per vendor). Default 4. */
      concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
      /** Days recorded series keep per base period; 0 keeps forever (the default). */
      retentionDays: Type.Optional(Type.Object({
        '1m': Type.Optional(Type.Integer({ minimum: 0, maximum: 36_500 })),
        '1d': Type.Optional(Type.Integer({ minimum: 0, maximum: 36_500 })),
      })),
      jobs: Type.Optional(Type.Array(Type.Object({
        /** Names the job in metrics, logs and /v1/meta. */
        id: Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' }),
        /** Universes whose members (as of each recorded day) are recorded. */
        universes: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 32 })),
        /** Symbols recorded besides the universes' members. */
        symbols: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 100_000 })),
        /** Base periods recorded. Default [1d]. */
        periods: Type.Optional(Type.Array(Type.Union([Type.Literal('1d'), Type.Literal('1m')]), { minItems: 1, maxItems: 2 })),
        /** Also record each member's ex-factors and instruments, and each universe's membership. Defaults true. */
        exFactors: Type.Optional(Type.Boolean()),
        instruments: Type.Optional(Type.Boolean()),
        membership: Type.Optional(Type.Boolean()),
      }), { maxItems: 64 })),
    })),
  })),
  /** WebSocket streaming (/v1/ws/stream, /v1/ws/quotes). */
  stream: Type.Object({
    /** How often subscribed, in-session symbols are refreshed and changes pushed, ms. */
    tickMs: Ms(100, 60_000),
    /** Per-connection send-buffer bound: above half of it updates are conflated; when queued plus
     * held-back bytes pass it (or after conflating for slowCloseMs) the connection is closed with 1013. */
    sendBufferBytes: Type.Integer({ minimum: 16_384, maximum: 256 * 1024 * 1024 }),
    /** How long a client may stay behind (conflating) before it is closed, ms. */
    slowCloseMs: Ms(1000, 600_000),
    /** Largest client message accepted; bigger ones close the connection with 1009. */
    maxPayloadBytes: Type.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024 }),
    /** Server ping interval; a connection that missed the previous pong is terminated, ms. */
    pingIntervalMs: Ms(1000, 600_000),
    /**
     * With Redis: how long a connection counts against its key's fleet-wide caps without its
     * instance's heartbeat (renewed every third of it), so a dead instance's connections are
     * released within this, ms. Default 4500.
     */
    fleetLeaseMs: Type.Optional(Ms(1000, 600_000)),
    /** The application-level heartbeat `{"op":"heartbeat",...}` to every connection, ms. Default 15000. */
    heartbeatMs: Type.Optional(Ms(100, 600_000)),
    /**
     * The replay log a resuming subscribe (`since`) reads: per channel and symbol, at most
     * maxLength updates (default 600) and none older than maxAgeMs (default 300000); a Redis
     * Stream per channel and symbol with Redis, in process otherwise.
     */
    replay: Type.Optional(Type.Object({
      maxLength: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
      maxAgeMs: Type.Optional(Ms(1000, 86_400_000)),
    })),
    /**
     * Whether updates carry `seq` and are kept in the replay log for resumes. Default true; false:
     * no `seq`, no replay log, a subscribe with `since` gets a snapshot.
     */
    sequence: Type.Optional(Type.Boolean()),
  }),
});

export type Config = Static<typeof ConfigSchema>;
