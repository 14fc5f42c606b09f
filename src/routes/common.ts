// Shared parameter handling for the /v1 routes: symbols, lists, time ranges, and the feature a
// candle period needs. Routes stay thin: parse → authorise → respond.
import type { FastifyRequest } from 'fastify';
import type { AccessNeeds } from '../access/guard.ts';
import { authorize } from '../access/guard.ts';
import type { Feature, KeyEntry } from '../access/keys.ts';
import type { Period, SymbolRef } from '../domain.ts';
import { AppError } from '../errors.ts';
import { parseList, parseSymbol, parseSymbolList } from '../markets/symbols.ts';
import { baseFetchFor, isMinutePeriod } from '../service/candle-plan.ts';

/** What a request of a route needs of its key: features, markets, symbols, and base bars. */
export interface RouteNeeds extends AccessNeeds {
  /** Base bars a candle request makes the service fetch and build (the plan's max_bars). */
  bars?: number;
}

/**
 * A route's needs as a function of its request's parsed input (query, params or body): declared
 * once in the route's options (`config: access(fn)`), checked by the route (requireAccess) and
 * recorded from the same function by the cache-hit fast path for the hits it answers later.
 */
export type RouteAccess = (request: FastifyRequest) => RouteNeeds;

declare module 'fastify' {
  interface FastifyRequest {
    keyEntry?: KeyEntry;
  }
  interface FastifyContextConfig {
    /** Operational routes need no key. */
    public?: boolean;
    /** The route's declared needs (routes/common.ts access()). */
    access?: RouteAccess;
  }
}

/** The `config` of a route whose requests need `fn(request)` of their key. */
export function access(fn: RouteAccess): { access: RouteAccess } {
  return { access: fn };
}

/** What the request's route declares it needs; undefined for routes that declare nothing. */
export function declaredNeeds(request: FastifyRequest): RouteNeeds | undefined {
  return request.routeOptions.config.access?.(request);
}

export function keyOf(request: FastifyRequest): KeyEntry {
  if (request.keyEntry === undefined) throw new AppError('MISSING_API_KEY', 'an API key is required');
  return request.keyEntry;
}

/** Needs of a route over a listed set of symbols (`symbols` in its query, or its POST body). */
export function listedSymbols(...features: Feature[]): RouteAccess {
  return (request) => {
    const input = (request.method === 'POST' ? request.body : request.query) as { symbols?: string | string[] } | undefined;
    const symbols = symbolList(input?.symbols);
    return { features, symbols, explicitCount: symbols.length };
  };
}

/** Needs of a single-symbol route (`symbol` in its query). */
export function oneListedSymbol(...features: Feature[]): RouteAccess {
  return (request) => ({ features, symbols: [oneSymbol((request.query as { symbol: string }).symbol)] });
}

/** Checks the key against what the route declares (its `config.access`). */
export function requireAccess(request: FastifyRequest): RouteNeeds {
  const needs = declaredNeeds(request);
  if (needs === undefined) throw new Error(`route ${request.routeOptions.url} declares no access needs`);
  authorize(keyOf(request), needs);
  return needs;
}

/** Base bars `symbols` × a candle window make the service fetch and build (requireBarBudget). */
export function barsFor(symbols: number, period: Period, window: { start?: number; end?: number; count: number }): number {
  return baseFetchFor(period, window).count * symbols;
}

/**
 * Work per request is bounded (issue 14): the base bars a candle request makes the service fetch
 * and build (symbols × base bars per symbol) must fit the plan's `max_bars`.
 */
export function requireBarBudget(request: FastifyRequest, symbols: number, period: Period, window: { start?: number; end?: number; count: number }): void {
  const plan = keyOf(request).plan;
  const perSymbol = baseFetchFor(period, window).count;
  const bars = perSymbol * symbols;
  if (bars <= plan.maxBars) return;
  throw new AppError('REQUEST_TOO_LARGE', `this request needs ${bars} base bars (${symbols} symbols × ${perSymbol}); the plan allows ${plan.maxBars} per request: ask for fewer symbols, a smaller count or a longer period`, {
    details: { bars, max_bars: plan.maxBars, symbols, bars_per_symbol: perSymbol },
  });
}

export function oneSymbol(raw: string): SymbolRef {
  const ref = parseSymbol(raw);
  if (ref === undefined) {
    throw new AppError('INVALID_SYMBOL', `'${truncate(raw)}' is not a valid symbol; use <code>.<exchange>, e.g. 600519.SH, 00700.HK, AAPL.US`, {
      details: { symbols: [truncate(raw)] },
    });
  }
  return ref;
}

/** A list of symbols (comma string or array): normalised, de-duplicated, request order kept. */
export function symbolList(raw: string | readonly string[] | undefined, name = 'symbols'): SymbolRef[] {
  if (raw !== undefined && typeof raw !== 'string' && !Array.isArray(raw)) {
    throw new AppError('INVALID_PARAMETER', `${name} must be a comma-separated string or an array of strings`);
  }
  if (Array.isArray(raw) && raw.some((item) => typeof item !== 'string')) {
    throw new AppError('INVALID_SYMBOL', `${name} must contain only strings`);
  }
  const items = parseList(raw);
  if (items.length === 0) throw new AppError('INVALID_PARAMETER', `${name} is required: give at least one symbol`, { details: { parameter: name } });
  const { refs, invalid } = parseSymbolList(items);
  if (invalid.length > 0) {
    throw new AppError('INVALID_SYMBOL', `not valid symbols: ${invalid.slice(0, 10).map(truncate).join(', ')}${invalid.length > 10 ? ', …' : ''}`, {
      details: { symbols: invalid.slice(0, 100).map(truncate) },
    });
  }
  return refs;
}

export function timeRange(start: number | undefined, end: number | undefined): void {
  if (start !== undefined && end !== undefined && start > end) {
    throw new AppError('INVALID_TIME_RANGE', 'start_time must not be after end_time', { details: { start_time: start, end_time: end } });
  }
}

export function periodFeature(period: Period): Feature {
  return isMinutePeriod(period) ? 'klines_minute' : 'klines_daily';
}

/**
 * The URL of a next page (the Link header): `path` with the canonical parameters, the cursor as
 * end_time, and the format when it is not JSON. Never the request's own URL: a cached answer is
 * shared by every key, and an `api_key` in the query must not travel into it.
 */
export function pageUrl(path: string, params: Record<string, string | number | undefined>, format: string): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, String(value));
  if (format !== 'json') query.set('format', format);
  return `${path}?${query.toString().replaceAll('%2C', ',')}`;
}

function truncate(text: string): string {
  return text.length > 32 ? `${text.slice(0, 32)}…` : text;
}
