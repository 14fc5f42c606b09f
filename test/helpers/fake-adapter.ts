// The one fake adapter of the tests and benchmarks. It answers from one of three sources:
//   - a script: fakeAdapter('vendor', { known }) knows the `known` symbols and stamps `version` on
//     every value (fakeQuote, fakeCandles), so a test tells a refreshed value from the old one;
//   - a real adapter it wraps: fakeAdapter(sim, { id? }) answers what the sim does, under its id or
//     another one (a "vendor" with real data);
//   - the HTTP stand-in: createStandInVendor() wraps a minimal quotes vendor on the real upstream
//     HTTP layer (createUpstreamHttp), so msw behind it sees every request.
// Whatever the source, it records every call (method, symbols, the deadline signal, when it
// settled), fails on demand (every call, or per symbol: 'error', 'hang', 'malformed',
// 'unavailable' with Retry-After, or a given error), waits (a delay, the hold/release gate)
// honouring the deadline signal, takes capability overrides, and has the adapter method of each
// resource it declares and no other (the resource descriptors name the method). The fault-injecting
// vendor *server* of test/faults/ is not this: it is a server, behind a real vendor adapter.
import type { Adapter, AdapterCapabilities, AdapterMethod, BySymbol, CallContext, Resource } from '../../adapters/types.ts';
import type { Candles, Quote, SymbolRef } from '../../src/domain.ts';
import { RESOURCE_DESCRIPTORS, RESOURCES } from '../../src/data/resources/index.ts';
import { AppError } from '../../src/errors.ts';
import { createUpstreamHttp, type UpstreamClient, type UpstreamHttpOptions } from '../../src/upstream/http.ts';

export type FailureMode = 'ok' | 'error' | 'hang' | 'malformed' | 'unavailable';
/** How a failing call fails: one of the modes, or by throwing exactly this error. */
export type Failure = Exclude<FailureMode, 'ok'> | Error;

export interface Call {
  method: AdapterMethod;
  /** Symbols of the call (one for candles/intraday, the pool id for listPool). */
  symbols: string[];
  /** The deadline signal the service handed in (never a client's). */
  signal: AbortSignal | undefined;
  /** performance.now() when the call answered or failed; undefined while it is in flight. */
  settledAt?: number;
}

/** Every call in order (counted on entry: failing and held calls included), and per method how many: `calls.getQuotes`. */
export type CallLog = Call[] & Readonly<Record<AdapterMethod, number>>;

export interface FakeAdapter extends Adapter {
  readonly calls: CallLog;
  /** The same log as `calls`. */
  readonly log: CallLog;
  /** Every call fails this way while it is not 'ok'. */
  mode: 'ok' | Failure;
  /** A call touching one of these symbols fails as mapped (the whole call), whatever `mode` says. */
  readonly failing: Map<string, Failure>;
  /** Latency before answering, ms. */
  delayMs: number;
  /** Scripted source: the symbols it knows (the others are absent from its answers: unknown). */
  readonly known: Set<string>;
  /** Scripted source: the version every value carries. */
  version: number;
  /** Calls wait (recorded on entry) until release(): "every request is in flight" tests. */
  hold(): void;
  release(): void;
  /** Calls of one method, or of all. */
  count(method?: AdapterMethod): number;
  /** Every symbol asked of `method`, in call order (duplicates kept). */
  symbolsOf(method: AdapterMethod): string[];
  /** The symbols of each call of `method`, in call order. */
  callsOf(method: AdapterMethod): string[][];
  /** Forget the calls. */
  reset(): void;
}

export interface FakeOptions {
  /** The id (and label) it answers under; default the wrapped adapter's. */
  id?: string;
  /** Scripted source: the symbols it knows. */
  known?: string[];
  /** Over the wrapped adapter's capabilities, or the script's (every resource, CN/HK/US, 1m and 1d, batches of 100). */
  caps?: Partial<AdapterCapabilities>;
  mode?: 'ok' | Failure;
  delayMs?: number;
  /** Retry-After seconds of the 'unavailable' failure; default 7. */
  retryAfterSeconds?: number;
}

/** Every resource declared (for `{ ...ALL_RESOURCES, depth: false }`). */
export const ALL_RESOURCES = Object.fromEntries(RESOURCES.map((r) => [r, true])) as Record<Resource, boolean>;

const METHODS: AdapterMethod[] = [...new Set(RESOURCE_DESCRIPTORS.map((d) => d.method))];

const SCRIPT_CAPABILITIES: AdapterCapabilities = {
  resources: ALL_RESOURCES, markets: ['CN', 'HK', 'US'], periods: { '1m': true, '1d': true }, maxBatch: 100, rawPrices: true, amount: true,
};

/** The value a scripted adapter answers for a quote: enough to tell which call produced it. */
export function fakeQuote(symbol: string, version: number): Quote {
  return { symbol, last_price: version } as unknown as Quote;
}

export function fakeCandles(version: number): Candles {
  return { timestamp: [version], open: [1], high: [1], low: [1], close: [version], volume: [1], amount: [1] };
}

/** What the script answers for a known symbol, per method; any other method: `{ symbol, version }`. */
const SCRIPT: Partial<Record<AdapterMethod, (symbol: string, version: number) => unknown>> = {
  getQuotes: fakeQuote,
  getExFactors: () => [],
  getCandles: (_symbol, version) => fakeCandles(version),
  getIntraday: (_symbol, version) => fakeCandles(version),
  listPool: () => undefined,
};

/** The symbols a method's first argument names: refs (batch), a ref, a candle query or a pool id. */
function symbolsIn(arg: unknown): string[] {
  if (Array.isArray(arg)) return (arg as SymbolRef[]).map((r) => r.symbol);
  if (typeof arg === 'string') return [arg];
  const symbol = (arg as { symbol: string | SymbolRef }).symbol;
  return [typeof symbol === 'string' ? symbol : symbol.symbol];
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason instanceof Error ? signal.reason : new AppError('UPSTREAM_TIMEOUT', 'fake adapter: aborted by its deadline');
}

/** Resolves when `promise` does, or rejects as soon as `signal` aborts. */
function orAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => { signal.removeEventListener('abort', onAbort); resolve(value); },
      (error: unknown) => { signal.removeEventListener('abort', onAbort); reject(error); },
    );
  });
}

/** A scripted fake (`source` is its id) or a fake around a real adapter. */
export function fakeAdapter(source: string | Adapter, options: FakeOptions = {}): FakeAdapter {
  const inner = typeof source === 'string' ? undefined : source;
  const id = options.id ?? (typeof source === 'string' ? source : source.id);
  const base = inner?.capabilities ?? SCRIPT_CAPABILITIES;
  const declared = { ...base, ...options.caps };
  // What it serves: what it declares, and (wrapping) what the wrapped adapter has a method for.
  const served = RESOURCE_DESCRIPTORS.filter((d) => declared.resources[d.name] === true && (inner === undefined || typeof inner[d.method] === 'function'));
  const capabilities: AdapterCapabilities = { ...declared, resources: Object.fromEntries(RESOURCES.map((r) => [r, served.some((d) => d.name === r)])) };
  const retryAfterSeconds = options.retryAfterSeconds ?? 7;
  const calls = [] as unknown as CallLog;
  for (const method of METHODS) {
    Object.defineProperty(calls, method, { get: () => calls.filter((c) => c.method === method).length, enumerable: false });
  }
  let held: { promise: Promise<void>; open: () => void } | undefined;

  const fail = (failure: Failure, signal: AbortSignal | undefined): Promise<never> => {
    if (failure instanceof Error) throw failure;
    const details = { adapter: id };
    switch (failure) {
      case 'error':
        throw new AppError('UPSTREAM_ERROR', 'fake adapter: injected upstream error', { details });
      case 'malformed':
        throw new AppError('UPSTREAM_BAD_RESPONSE', 'fake adapter: injected malformed response', { details });
      case 'unavailable':
        throw new AppError('UPSTREAM_UNAVAILABLE', 'fake adapter: injected vendor rate limit', { details, retryAfterSeconds });
      case 'hang':
        return orAbort(new Promise<never>(() => undefined), signal);
    }
  };

  const scripted = (method: AdapterMethod, arg: unknown): unknown => {
    const value = SCRIPT[method] ?? ((symbol: string, version: number) => ({ symbol, version }));
    if (!Array.isArray(arg)) {
      const [symbol] = symbolsIn(arg);
      return self.known.has(symbol) ? value(symbol, self.version) : undefined;
    }
    const out: BySymbol<unknown> = new Map();
    for (const symbol of symbolsIn(arg)) if (self.known.has(symbol)) out.set(symbol, value(symbol, self.version));
    return out;
  };

  // The symbols (or query, ref, pool) come first and the context last: getFinancials(refs, statement, ctx).
  const serve = (method: AdapterMethod) => async (...args: unknown[]): Promise<unknown> => {
    const [arg] = args;
    const last = args.at(-1);
    const ctx = args.length > 1 && typeof last === 'object' ? last as CallContext | undefined : undefined;
    const call: Call = { method, symbols: symbolsIn(arg), signal: ctx?.signal };
    calls.push(call);
    try {
      if (held !== undefined) await orAbort(held.promise, call.signal);
      if (self.delayMs > 0) await orAbort(new Promise<void>((resolve) => setTimeout(resolve, self.delayMs)), call.signal);
      const failure = call.symbols.map((s) => self.failing.get(s)).find((f) => f !== undefined) ?? self.mode;
      if (failure !== 'ok') await fail(failure, call.signal);
      if (inner === undefined) return scripted(method, arg);
      return await (inner[method] as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
    } finally {
      call.settledAt = performance.now();
    }
  };

  const self: FakeAdapter = {
    id,
    label: options.id ?? inner?.label ?? id,
    capabilities,
    calls,
    log: calls,
    mode: options.mode ?? 'ok',
    failing: new Map(),
    delayMs: options.delayMs ?? 0,
    known: new Set(options.known ?? []),
    version: 1,
    ...Object.fromEntries(served.map((d) => [d.method, serve(d.method)])),
    ready: inner?.ready?.bind(inner),
    close: inner?.close?.bind(inner),
    hold() {
      if (held !== undefined) return;
      let open!: () => void;
      held = { promise: new Promise<void>((resolve) => { open = resolve; }), open };
    },
    release() {
      held?.open();
      held = undefined;
    },
    count: (method) => (method === undefined ? calls.length : calls[method]),
    symbolsOf: (method) => calls.filter((c) => c.method === method).flatMap((c) => c.symbols),
    callsOf: (method) => calls.filter((c) => c.method === method).map((c) => c.symbols),
    reset() {
      calls.length = 0;
    },
  };
  return self;
}

// The HTTP stand-in ('stand-in': CN quotes only). Vendor body: {"quotes":[{"code","name","price",
// "open","high","low","prev_close","volume","amount","time"}]}; unknown codes are simply absent.

export const STAND_IN_URL = 'https://vendor.test/quotes';

export interface StandInVendor {
  adapter: FakeAdapter;
  client: UpstreamClient;
}

interface VendorQuote {
  code: string;
  name: string;
  price: number;
  open: number;
  high: number;
  low: number;
  prev_close: number;
  volume: number;
  amount: number;
  time: number;
}

const NUMBER_FIELDS = ['price', 'open', 'high', 'low', 'prev_close', 'volume', 'amount', 'time'] as const;

function badResponse(why: string): AppError {
  return new AppError('UPSTREAM_BAD_RESPONSE', 'The upstream data source sent an unreadable response', { details: { adapter: 'stand-in', why } });
}

function parseQuotes(body: unknown): VendorQuote[] {
  const quotes = (body as { quotes?: unknown } | null)?.quotes;
  if (!Array.isArray(quotes)) throw badResponse('no quotes array');
  for (const q of quotes as Record<string, unknown>[]) {
    if (typeof q?.code !== 'string' || typeof q.name !== 'string') throw badResponse('quote without code/name');
    for (const field of NUMBER_FIELDS) if (!Number.isFinite(q[field])) throw badResponse(`quote ${field} is not a number`);
  }
  return quotes as VendorQuote[];
}

function toQuote(q: VendorQuote): Quote {
  const change = q.price - q.prev_close;
  return {
    symbol: q.code,
    region: 'CN',
    last_price: q.price,
    open: q.open,
    high: q.high,
    low: q.low,
    prev_close: q.prev_close,
    volume: q.volume,
    amount: q.amount,
    timestamp: q.time,
    ext: {
      type: 'cn_equity',
      name: q.name,
      amplitude: q.prev_close > 0 ? ((q.high - q.low) / q.prev_close) * 100 : 0,
      change_amount: change,
      change_pct: q.prev_close > 0 ? (change / q.prev_close) * 100 : 0,
      turnover_rate: null,
    },
  };
}

/** The stand-in on its own HTTP client (deadline, one retry, 429 handling, budget), as a fake. */
export function createStandInVendor(overrides: Partial<UpstreamHttpOptions> = {}, options: FakeOptions = {}): StandInVendor {
  const client = createUpstreamHttp({
    adapterId: 'stand-in',
    timeoutMs: 300,
    connections: 4,
    retry: { maxRetries: 1, baseDelayMs: 5 },
    budget: { max: 1_000, windowMs: 60_000 },
    random: () => 0.5,
    ...overrides,
  });
  const standIn: Adapter = {
    id: 'stand-in',
    label: 'stand-in',
    capabilities: {
      resources: { quotes: true }, markets: ['CN'], periods: { '1m': false, '1d': false }, maxBatch: 50, rawPrices: false, amount: true,
    },
    async getQuotes(symbols, ctx) {
      const url = `${STAND_IN_URL}?symbols=${encodeURIComponent(symbols.map((s) => s.symbol).join(','))}`;
      const { body } = await json(client, { url, resource: 'quotes', signal: ctx?.signal, deadlineAt: ctx?.deadlineAt });
      const out = new Map<string, Quote>();
      for (const q of parseQuotes(body)) out.set(q.code, toQuote(q));
      return out;
    },
    close: () => client.close(),
  };
  return { adapter: fakeAdapter(standIn, options), client };
}

/** A vendor quote row for msw handlers. */
export function vendorQuote(code: string, price: number, time: number): VendorQuote {
  return { code, name: `name of ${code}`, price, open: price - 1, high: price + 2, low: price - 2, prev_close: price - 0.5, volume: 12_300, amount: 12_300 * price, time };
}

/** The response body parsed as JSON (the adapters' parse.ts does this in the service). */
export async function json(c: { request: UpstreamClient['request'] }, req: Parameters<UpstreamClient['request']>[0]): Promise<{ status: number; headers: Headers; body: unknown }> {
  const res = await c.request(req);
  if (res.text === '') return { status: res.status, headers: res.headers, body: undefined };
  try {
    return { status: res.status, headers: res.headers, body: JSON.parse(res.text) };
  } catch (cause) {
    throw new AppError('UPSTREAM_BAD_RESPONSE', 'The upstream data source sent an unreadable response', { cause });
  }
}
