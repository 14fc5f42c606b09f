// Authentication (key from header or query) and authorisation (plan markets × features and the
// per-request symbol cap). Runs before any cache lookup.
import type { FastifyRequest } from 'fastify';
import type { Market, SymbolRef } from '../domain.ts';
import { marketOf } from '../markets/symbols.ts';
import { AppError, featureReason } from '../errors.ts';
import type { Feature, KeyEntry, KeyStore } from './keys.ts';

/** The WebSocket subprotocol a browser names to carry its key (it cannot set X-API-Key). */
export const WS_KEY_PROTOCOL_PREFIX = 'mdqs.key.';

/** The key of an `Authorization: Bearer <key>` header, if that is what the header holds. */
export function bearerKey(authorization: string | undefined): string | undefined {
  if (authorization === undefined || authorization.length < 8 || authorization.slice(0, 7).toLowerCase() !== 'bearer ') return undefined;
  const key = authorization.slice(7).trim();
  return key === '' ? undefined : key;
}

/**
 * The key as presented: header `X-API-Key`, then `Authorization: Bearer`, then the `api_key` query parameter; a WebSocket
 * handshake may also carry it as a subprotocol `mdqs.key.<key>` (browsers can set no header on a
 * WebSocket, and a key in the URL would end up in logs and history).
 */
export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  const fromHeader = Array.isArray(header) ? header[0] : header;
  if (fromHeader !== undefined && fromHeader !== '') return fromHeader;
  // `Authorization: Bearer <key>` on /v1 (/metrics reads its own token from that header).
  if (request.url.startsWith('/v1')) {
    const bearer = bearerKey(request.headers.authorization);
    if (bearer !== undefined) return bearer;
  }
  const query = request.query as Record<string, unknown> | undefined;
  const fromQuery = query?.api_key;
  if (typeof fromQuery === 'string' && fromQuery !== '') return fromQuery;
  const protocols = request.headers['sec-websocket-protocol'];
  if (typeof protocols === 'string' && protocols.includes(WS_KEY_PROTOCOL_PREFIX)) {
    for (const protocol of protocols.split(',')) {
      const name = protocol.trim();
      if (name.startsWith(WS_KEY_PROTOCOL_PREFIX) && name.length > WS_KEY_PROTOCOL_PREFIX.length) return name.slice(WS_KEY_PROTOCOL_PREFIX.length);
    }
  }
  return undefined;
}

export function authenticate(request: FastifyRequest, keys: KeyStore): KeyEntry {
  const key = presentedKey(request);
  if (key === undefined) {
    // The free tier, when the keys file names a plan for it; a wrong key is never downgraded to it.
    const anonymous = keys.anonymous;
    if (anonymous !== undefined) return anonymous;
    throw new AppError('MISSING_API_KEY', 'an API key is required: send it in the X-API-Key header (or Authorization: Bearer <key>, or the api_key query parameter)');
  }
  const entry = keys.lookup(key);
  if (entry === undefined) throw new AppError('INVALID_API_KEY', 'the API key is not valid');
  return entry;
}

export interface AccessNeeds {
  features: Feature[];
  /** Symbols the request touches (explicit or pool members); their regions must be granted. */
  symbols?: readonly SymbolRef[];
  /** Markets touched without symbols (e.g. a pool, or CN_FUTURES for a futures exchange). */
  regions?: readonly Market[];
  /** Explicitly listed symbols, counted against the plan's cap. */
  explicitCount?: number;
}

/** 403 for the whole request, naming everything the plan lacks. */
export function authorize(entry: KeyEntry, needs: AccessNeeds): void {
  const plan = entry.plan;
  if (needs.explicitCount !== undefined && needs.explicitCount > plan.maxSymbols) {
    throw new AppError('TOO_MANY_SYMBOLS', `at most ${plan.maxSymbols} symbols per request on this plan; got ${needs.explicitCount}`, {
      details: { max_symbols: plan.maxSymbols, requested: needs.explicitCount },
    });
  }
  const missingFeatures = needs.features.filter((f) => !plan.features.has(f));
  const missingMarkets = new Set<Market>();
  const deniedSymbols: string[] = [];
  for (const region of needs.regions ?? []) if (!plan.markets.has(region)) missingMarkets.add(region);
  for (const ref of needs.symbols ?? []) {
    const market = marketOf(ref);
    if (!plan.markets.has(market)) {
      missingMarkets.add(market);
      if (deniedSymbols.length < 50) deniedSymbols.push(ref.symbol);
    }
  }
  if (missingFeatures.length === 0 && missingMarkets.size === 0) return;
  const markets = [...missingMarkets];
  const parts: string[] = [];
  if (missingFeatures.length > 0) parts.push(`feature ${missingFeatures.join(', ')}`);
  if (markets.length > 0) {
    parts.push(`market ${markets.join(', ')}${deniedSymbols.length > 0 ? ` (symbols ${deniedSymbols.join(', ')})` : ''}`);
  }
  if (entry.anonymous === true) {
    // Nothing was sent: say so, and what the free plan does include, rather than blame a plan the
    // client never chose.
    throw new AppError('MISSING_API_KEY', `no API key was sent, and the free plan (${plan.name}) does not include ${parts.join(' and ')}; `
      + `it includes features ${[...plan.features].join(', ') || 'none'} on markets ${[...plan.markets].join(', ') || 'none'}. `
      + 'Send a key in the X-API-Key header (or Authorization: Bearer <key>, or the api_key query parameter)', {
      details: { plan: plan.name, ...(missingFeatures.length > 0 ? { missing_features: missingFeatures } : {}), ...(markets.length > 0 ? { missing_markets: markets } : {}), free_features: [...plan.features], free_markets: [...plan.markets] },
    });
  }
  const details: Record<string, unknown> = { plan: plan.name };
  if (missingFeatures.length > 0) details.missing_features = missingFeatures;
  if (markets.length > 0) details.missing_markets = markets;
  if (deniedSymbols.length > 0) details.symbols = deniedSymbols;
  const reason = missingFeatures.length > 0 ? featureReason(missingFeatures[0]) : 'MARKET_NOT_PERMITTED';
  throw new AppError(reason, `your plan does not include ${parts.join(' and ')}`, { details });
}
