// The adapter interface (docs/architecture.md#adapters). Adapters take canonical inputs and return the
// normalised domain shapes of src/domain.ts; vendor names, units and envelopes never leave an
// adapter's folder. Adapters do no caching and no concurrency control beyond one logical call.

import type {
  BasePeriod, Candles, Depth, ExFactor, Instrument, Market, PoolDetail, PoolId, Quote, Region, SymbolRef,
} from '../src/domain.ts';
import type { Statement, StatementRecord } from '../src/financials/types.ts';

// The resources by name (a leaf: the descriptors in src/data/resources/ are checked against it).
import type { Resource } from '../src/resources.ts';
export type { Resource };

/** Declared once, as data, with explicit `false` (ccxt's `has`). The service checks before calling. */
export interface AdapterCapabilities {
  /** The resources it serves; absent means no (an adapter declares only what it serves). */
  resources: Partial<Record<Resource, boolean>>;
  /** CN_FUTURES: China futures contracts (routed through the CN chain; an adapter without it is never asked for one). */
  markets: Market[];
  /**
   * Where a resource covers fewer markets than `markets` (e.g. eastmoney's dividend table is
   * A-shares only: `{ exFactors: ['CN'] }`). The router never calls an adapter for a
   * resource × market it does not declare.
   */
  resourceMarkets?: Partial<Record<Resource, Market[]>>;
  /** Base periods served natively; the service aggregates everything else. */
  periods: Record<BasePeriod, boolean>;
  /** Most symbols one native batch call accepts (quotes, depth, instruments). */
  maxBatch: number;
  /** Whether candles can be fetched unadjusted (the engine needs raw prices). */
  rawPrices: boolean;
  /** Whether quotes carry `amount` (false: the adapter reports 0 and says so here). */
  amount: boolean;
  /**
   * How many trading days back the vendor serves a base period (absent: its whole history). The
   * recorder catches up no further: older days would come back empty, not as history.
   */
  historyDays?: Partial<Record<BasePeriod, number>>;
}

/** Raw (unadjusted) candles for one symbol and base period. */
export interface CandleQuery {
  symbol: SymbolRef;
  period: BasePeriod;
  /** Inclusive bounds, epoch ms, on bar labels (docs/contract.md#candle-time-semantics). Omitted: unbounded on that side. */
  start?: number;
  end?: number;
  /** The newest `count` bars inside the bounds. Omitted: every bar inside the bounds. */
  count?: number;
}

/** Per-call context: the deadline owned by the service, never a client's abort signal. */
export interface CallContext {
  /** Aborts the call at its deadline. */
  signal?: AbortSignal;
  /** When `signal` fires, epoch ms by the service's clock (the HTTP layer plans within it). */
  deadlineAt?: number;
}

/**
 * Result of a batch call: found items keyed by normalised symbol; absent keys are unknown symbols,
 * except those in `rejected`: the vendor answered for them, but only with rows that failed
 * validation (a vendor failure for that symbol, never an unknown symbol).
 */
export type BySymbol<T> = Map<string, T> & { rejected?: ReadonlySet<string> };

export interface Adapter {
  readonly id: string;
  readonly capabilities: AdapterCapabilities;
  /** A human label for logs, /readyz and `X-Upstream` (e.g. `sim`). */
  readonly label: string;

  // One method per resource it serves (capabilities.resources says which); absent otherwise,
  // never stubbed: the router never calls an adapter for a resource it does not declare.
  getQuotes?(symbols: SymbolRef[], ctx?: CallContext): Promise<BySymbol<Quote>>;
  getDepth?(symbols: SymbolRef[], ctx?: CallContext): Promise<BySymbol<Depth>>;
  /** Raw candles; `undefined` when the symbol is unknown to the vendor. */
  getCandles?(query: CandleQuery, ctx?: CallContext): Promise<Candles | undefined>;
  /** Today's (the latest session's) raw 1m candles up to now; `undefined` for an unknown symbol. */
  getIntraday?(symbol: SymbolRef, ctx?: CallContext): Promise<Candles | undefined>;
  /** Every ex-factor event of each symbol, ascending; unknown symbols absent from the map. */
  getExFactors?(symbols: SymbolRef[], ctx?: CallContext): Promise<BySymbol<ExFactor[]>>;
  getInstruments?(symbols: SymbolRef[], ctx?: CallContext): Promise<BySymbol<Instrument>>;
  /**
   * Every published version of `statement` for each symbol (ascending period_end; restatements
   * kept beside the originals), the whole series; symbols it has no statements for are absent.
   */
  getFinancials?<S extends Statement>(symbols: SymbolRef[], statement: S, ctx?: CallContext): Promise<BySymbol<StatementRecord<S>[]>>;
  /** Members of a pool; `undefined` when the adapter does not know the pool. */
  listPool?(pool: PoolId, ctx?: CallContext): Promise<PoolDetail | undefined>;
  /** Cheap reachability probe for /readyz; must not spend vendor quota where avoidable. */
  ready?(): Promise<boolean>;
  /**
   * The vendor's push feed, where it has one (a WebSocket it streams quotes and depth on): the
   * stream subscribes there instead of polling while the feed is connected. Opening connects
   * nothing; the feed connects on `start()`.
   */
  openPush?(listener: PushListener): PushFeed;
  close?(): Promise<void>;
}

/** A channel a vendor pushes (the stream's channels). */
export type PushChannel = 'quotes' | 'depth';

/** What a push feed reports: normalised values (the shapes getQuotes/getDepth return) and its state. */
export interface PushListener {
  quotes(items: BySymbol<Quote>): void;
  depth(items: BySymbol<Depth>): void;
  /** Connected (subscriptions are live upstream) or lost (`reason`: why), each change once. */
  state(connected: boolean, reason?: string): void;
  /** A pushed message that could not be used (malformed, or the vendor's error message). */
  problem(reason: string): void;
}

export interface PushFeed {
  readonly connected: boolean;
  /** Connects (and reconnects after a loss, with back-off) until close(). */
  start(): void;
  subscribe(channel: PushChannel, refs: readonly SymbolRef[]): void;
  unsubscribe(channel: PushChannel, symbols: readonly string[]): void;
  /** Symbols subscribed upstream on `channel`. */
  subscribed(channel: PushChannel): number;
  close(): Promise<void>;
}

/** The adapter methods, one per resource (the descriptors' `method`). */
export type AdapterMethod = 'getQuotes' | 'getDepth' | 'getCandles' | 'getIntraday' | 'getExFactors' | 'getInstruments' | 'getFinancials' | 'listPool';

/** An adapter that has `M` (what a factory returns: exactly the methods of what it serves). */
export type Serving<M extends AdapterMethod> = Adapter & Required<Pick<Adapter, M>>;

/** Everything an adapter factory may receive; no process.env, no module-level state. */
export interface AdapterDeps {
  /** Injectable clock, epoch ms. */
  now: () => number;
  /** The vendor's HTTP layer (src/upstream/), built by the registry from the vendor's config. */
  http?: UpstreamHttp;
  /**
   * Rows a vendor sent that fail validation (docs/contract.md#shapes-and-units) are dropped at the boundary and
   * reported here (the service logs at warn and counts `mdqs_upstream_invalid_rows_total`).
   */
  onInvalidRows?: (event: InvalidRowsEvent) => void;
}

export interface InvalidRowsEvent {
  adapter: string;
  resource: Resource;
  symbol?: string;
  /** Rows dropped. */
  dropped: number;
  /** Short constant reason, e.g. 'negative_price', 'duplicate_timestamp'. */
  reason: string;
}

export type AdapterFactory<Options> = (options: Options, deps: AdapterDeps) => Adapter;

/**
 * The HTTP layer a vendor adapter calls (implemented in src/upstream/http.ts, one per vendor): an
 * undici 7 Agent as the dispatcher of global fetch, the caller's deadline (ctx.signal and
 * ctx.deadlineAt, passed on in the request), at most one retry with jitter on network
 * errors/502/503/504 inside it, no inline retry of a vendor 429, and the vendor's outbound request
 * budget. The breaker is the resilience layer's, around the whole
 * adapter call. Failures arrive as AppError (src/errors.ts): UPSTREAM_TIMEOUT (504),
 * UPSTREAM_ERROR (502), UPSTREAM_UNAVAILABLE (503, vendor 429 / budget spent, with
 * retryAfterSeconds).
 */
export interface UpstreamRequest {
  /** Absolute URL including the query string. */
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Resource label for metrics and logs, e.g. 'quotes'. */
  resource: Resource;
  /** Overrides the client's default deadline for this call, ms. */
  deadlineMs?: number;
  /**
   * Statuses the adapter wants to see as a response instead of an error (e.g. 404 for an unknown
   * symbol). 2xx always pass.
   */
  acceptStatus?: number[];
  /** The caller's deadline (CallContext): aborts the request. */
  signal?: AbortSignal;
  /**
   * When `signal` fires, epoch ms (CallContext.deadlineAt): a spent budget waits for room only
   * while a slot frees before it.
   */
  deadlineAt?: number;
}

export interface UpstreamResponse {
  status: number;
  headers: Headers;
  text: string;
}

export interface UpstreamHttp {
  /** The response text; the adapter's parse.ts reads it (JSON, JSONP, CSV-like). */
  request(req: UpstreamRequest): Promise<UpstreamResponse>;
}
