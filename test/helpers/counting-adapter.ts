// Wraps any Adapter to count what the service asks of it, and to make it fail on demand, so route
// tests can prove "one upstream call" and drive every upstream failure without a real vendor.
import type { Adapter, AdapterCapabilities, CallContext } from '../../adapters/types.ts';
import { AppError } from '../../src/errors.ts';
import { createGate } from './gate.ts';

export type FailureMode = 'ok' | 'error' | 'hang' | 'malformed' | 'unavailable';

export type AdapterMethod = 'getQuotes' | 'getDepth' | 'getCandles' | 'getIntraday' | 'getExFactors' | 'getInstruments' | 'listPool';

export interface RecordedCall {
  method: AdapterMethod;
  /** Symbols of the call (one for candles/intraday, the pool id for listPool). */
  symbols: string[];
  /** The deadline signal the service handed in (never a client's). */
  signal: AbortSignal | undefined;
}

export interface CountingAdapter extends Adapter {
  /** Calls per method, counted on entry (failing and hanging calls included). */
  readonly calls: Record<AdapterMethod, number>;
  readonly log: RecordedCall[];
  mode: FailureMode;
  /** Calls touching any of these symbols fail as in mode `error`, whatever `mode` says. */
  readonly failingSymbols: Set<string>;
  /** Artificial latency before answering, ms (honours ctx.signal). */
  delayMs: number;
  /** Calls wait here until release(); for deterministic "all requests are in flight" tests. */
  hold(): void;
  release(): void;
  /** Total calls of one method, or of all methods. */
  count(method?: AdapterMethod): number;
  /** Every symbol asked of `method`, in call order (duplicates kept). */
  symbolsOf(method: AdapterMethod): string[];
  reset(): void;
}

export interface CountingOptions {
  mode?: FailureMode;
  delayMs?: number;
  /** Override the wrapped adapter's native batch size. */
  maxBatch?: number;
  /** Seconds of Retry-After for the `unavailable` mode; default 7. */
  retryAfterSeconds?: number;
}

const METHODS: AdapterMethod[] = ['getQuotes', 'getDepth', 'getCandles', 'getIntraday', 'getExFactors', 'getInstruments', 'listPool'];

function zeroCounts(): Record<AdapterMethod, number> {
  return Object.fromEntries(METHODS.map((m) => [m, 0])) as Record<AdapterMethod, number>;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason instanceof Error ? signal.reason : new AppError('UPSTREAM_TIMEOUT', 'counting adapter: aborted by its deadline');
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

export function countingAdapter(inner: Adapter, options: CountingOptions = {}): CountingAdapter {
  const capabilities: AdapterCapabilities = options.maxBatch === undefined
    ? inner.capabilities
    : { ...inner.capabilities, maxBatch: options.maxBatch };
  const retryAfterSeconds = options.retryAfterSeconds ?? 7;
  let calls = zeroCounts();
  const log: RecordedCall[] = [];
  const gate = createGate();

  const before = async (method: AdapterMethod, symbols: string[], ctx: CallContext | undefined): Promise<void> => {
    calls[method] += 1;
    log.push({ method, symbols, signal: ctx?.signal });
    const signal = ctx?.signal;
    if (gate.closed !== undefined) await orAbort(gate.closed, signal);
    if (self.delayMs > 0) await orAbort(new Promise<void>((resolve) => setTimeout(resolve, self.delayMs)), signal);
    const mode = symbols.some((s) => self.failingSymbols.has(s)) ? 'error' : self.mode;
    switch (mode) {
      case 'ok':
        return;
      case 'error':
        throw new AppError('UPSTREAM_ERROR', 'counting adapter: injected upstream error', { details: { adapter: inner.id } });
      case 'malformed':
        throw new AppError('UPSTREAM_BAD_RESPONSE', 'counting adapter: injected malformed response', { details: { adapter: inner.id } });
      case 'unavailable':
        throw new AppError('UPSTREAM_UNAVAILABLE', 'counting adapter: injected vendor rate limit', {
          details: { adapter: inner.id }, retryAfterSeconds,
        });
      case 'hang':
        await orAbort(new Promise<never>(() => undefined), signal);
    }
  };

  const self: CountingAdapter = {
    id: inner.id,
    label: inner.label,
    capabilities,
    calls: undefined as unknown as Record<AdapterMethod, number>,
    log,
    mode: options.mode ?? 'ok',
    failingSymbols: new Set<string>(),
    delayMs: options.delayMs ?? 0,

    async getQuotes(symbols, ctx) {
      await before('getQuotes', symbols.map((s) => s.symbol), ctx);
      return inner.getQuotes!(symbols, ctx);
    },
    async getDepth(symbols, ctx) {
      await before('getDepth', symbols.map((s) => s.symbol), ctx);
      return inner.getDepth!(symbols, ctx);
    },
    async getCandles(query, ctx) {
      await before('getCandles', [query.symbol.symbol], ctx);
      return inner.getCandles!(query, ctx);
    },
    async getIntraday(symbol, ctx) {
      await before('getIntraday', [symbol.symbol], ctx);
      return inner.getIntraday!(symbol, ctx);
    },
    async getExFactors(symbols, ctx) {
      await before('getExFactors', symbols.map((s) => s.symbol), ctx);
      return inner.getExFactors!(symbols, ctx);
    },
    async getInstruments(symbols, ctx) {
      await before('getInstruments', symbols.map((s) => s.symbol), ctx);
      return inner.getInstruments!(symbols, ctx);
    },
    async listPool(pool, ctx) {
      await before('listPool', [pool], ctx);
      return inner.listPool!(pool, ctx);
    },
    ready: inner.ready?.bind(inner),
    close: inner.close?.bind(inner),

    hold: () => gate.hold(),
    release: () => gate.release(),
    count(method) {
      return method === undefined ? METHODS.reduce((sum, m) => sum + calls[m], 0) : calls[method];
    },
    symbolsOf(method) {
      return log.filter((c) => c.method === method).flatMap((c) => c.symbols);
    },
    reset() {
      calls = zeroCounts();
      log.length = 0;
    },
  };
  Object.defineProperty(self, 'calls', { get: () => calls, enumerable: true });
  return self;
}
