// A keys reload applied to open connections (every instance reloads on the published reload):
// each connection's key is looked up again by hash. A key that is gone closes its connections
// with 4401 "key revoked", an expired one with 4401 "key expired"; a changed plan applies at once:
// a plan that no longer permits the route closes with 4403, symbols of a channel or market it no
// longer grants are unsubscribed with an error frame naming them, and past the new
// `max_connections` the key's newest connections close with 4429, past `max_subscriptions` its
// newest subscriptions go (an error frame again).
import type { KeyEntry } from '../access/keys.ts';
import { AppError, featureReason } from '../errors.ts';
import { marketOf } from '../markets/symbols.ts';
import { isAnonymous, type StreamCaps } from './caps.ts';
import { maxConnections, maxSubscriptions } from './limits.ts';
import type { Client } from './outbox.ts';
import { CHANNELS, CLOSE, type Channel, type CloseCause } from './protocol.ts';
import type { Subscriptions } from './subscriptions.ts';

/** The quotes-only route: its connections need the quotes feature. */
const LEGACY_ROUTE = '/v1/ws/quotes';

/** What the hub lends to apply a reload. */
export interface KeyChangeHost {
  now(): number;
  readonly caps: StreamCaps;
  readonly subscriptions: Subscriptions;
  closeWith(client: Client, cause: CloseCause): void;
  drop(client: Client, channel: Channel, symbols: string[]): void;
  sendError(client: Client, error: AppError): void;
  scheduleExpiry(client: Client): void;
}

export function listed(symbols: readonly string[]): string {
  return `${symbols.slice(0, 20).join(', ')}${symbols.length > 20 ? ', …' : ''}`;
}

export function applyKeys(host: KeyChangeHost, clients: Iterable<Client>, resolve: (entry: KeyEntry) => KeyEntry | undefined): void {
  const now = host.now();
  const byKey = new Map<string, Client[]>();
  for (const client of [...clients]) {
    if (client.closed) continue;
    const next = resolve(client.entry);
    if (next === undefined) {
      host.closeWith(client, CLOSE.keyRevoked);
      continue;
    }
    if (next.expiresAt !== undefined && now >= next.expiresAt) {
      host.closeWith(client, CLOSE.keyExpired);
      continue;
    }
    if (next !== client.entry) rekey(host.caps, client, next);
    host.scheduleExpiry(client);
    if (!permits(host, client)) continue;
    const list = byKey.get(client.owner);
    if (list === undefined) byKey.set(client.owner, [client]);
    else list.push(client);
  }
  for (const [id, owned] of byKey) enforceCaps(host, id, owned);
}

/** The key's record changed (its plan, or its id): move the per-key counts if the id did. */
function rekey(caps: StreamCaps, client: Client, next: KeyEntry): void {
  const before = client.owner;
  client.entry = next;
  if (isAnonymous(next) || before === next.id) return;
  client.owner = next.id;
  const held = client.subs.quotes.size + client.subs.depth.size;
  const old = caps.state(before);
  old.connections -= 1;
  old.subscriptions -= held;
  caps.tidy(before);
  const state = caps.state(next.id);
  state.connections += 1;
  state.subscriptions += held;
}

function dropWithError(host: KeyChangeHost, client: Client, channel: Channel, symbols: string[], error: AppError): void {
  host.drop(client, channel, symbols);
  host.sendError(client, error);
}

/**
 * Whether the plan still permits the connection: false (and closed with 4403) when it grants
 * none of the route's channels; else what it no longer grants is unsubscribed, with an error.
 */
function permits(host: KeyChangeHost, client: Client): boolean {
  const plan = client.entry.plan;
  const legacy = client.route === LEGACY_ROUTE;
  if (legacy ? !plan.features.has('quotes') : !(plan.features.has('quotes') || plan.features.has('depth'))) {
    host.closeWith(client, CLOSE.planForbids);
    return false;
  }
  for (const channel of CHANNELS) {
    const subs = [...client.subs[channel]];
    if (subs.length === 0) continue;
    if (!plan.features.has(channel)) {
      dropWithError(host, client, channel, subs, new AppError(featureReason(channel), `your plan no longer includes feature ${channel}: unsubscribed ${listed(subs)}`, {
        details: { plan: plan.name, missing_features: [channel], channel, symbols: subs.slice(0, 100) },
      }));
      continue;
    }
    const denied = subs.filter((symbol) => {
      const ref = host.subscriptions.get(channel, symbol)?.ref;
      return ref !== undefined && !plan.markets.has(marketOf(ref));
    });
    if (denied.length === 0) continue;
    const markets = [...new Set(denied.map((symbol) => marketOf(host.subscriptions.get(channel, symbol)!.ref)))];
    dropWithError(host, client, channel, denied, new AppError('MARKET_NOT_PERMITTED', `your plan no longer includes market ${markets.join(', ')}: unsubscribed ${listed(denied)}`, {
      details: { plan: plan.name, missing_markets: markets, channel, symbols: denied.slice(0, 100) },
    }));
  }
  return true;
}

/** A key over its plan's caps after a reload: its newest connections close, then its newest subscriptions go. */
function enforceCaps(host: KeyChangeHost, id: string, clients: Client[]): void {
  const plan = clients[0].entry.plan;
  const connectionCap = maxConnections(plan);
  // Newest first (clients are in attach order).
  const newest = [...clients].sort((a, b) => b.id - a.id);
  let open = host.caps.peek(id)?.connections ?? 0;
  for (const client of newest) {
    if (open <= connectionCap) break;
    host.closeWith(client, CLOSE.tooManyConnections);
    open -= 1;
  }
  const cap = maxSubscriptions(plan);
  const state = host.caps.peek(id);
  if (state === undefined || state.subscriptions <= cap) return;
  for (const client of newest) {
    if (client.closed) continue;
    for (const channel of ['depth', 'quotes'] as const) {
      const excess = state.subscriptions - cap;
      if (excess <= 0) return;
      const subs = [...client.subs[channel]];
      const dropped = subs.slice(Math.max(0, subs.length - excess));
      if (dropped.length === 0) continue;
      dropWithError(host, client, channel, dropped, new AppError('TOO_MANY_SYMBOLS', `your plan now allows at most ${cap} subscriptions per key: unsubscribed ${listed(dropped)}`, {
        details: { max_subscriptions: cap, channel, symbols: dropped.slice(0, 100) },
      }));
    }
  }
}
