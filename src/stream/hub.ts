// The stream hub: who subscribes to what, one batched refresh per channel per tick through the
// service (the same loader and caches as REST), change detection on each symbol's serialised
// JSON, and fan-out where every distinct frame is serialised once and the same bytes go to every
// client that needs them. Slow clients are conflated (latest value per symbol), then closed.
//
// A symbol is refreshed only while someone subscribes to it and while its market is live: in a
// regular session, or for a short grace after a session edge (open, lunch, close) so the value
// that was current at the edge arrives even when the cache still held the one before it.
//
// With a fleet (fleet.ts, Redis configured), the caps count every instance's and worker's
// connections, and ticks are the fleet's: aligned to the wall clock, each symbol refreshed by one
// instance per tick and its value pushed by all.
import type { FastifyBaseLogger } from 'fastify';
import type WebSocket from 'ws';
import { addressBucket } from '../access/auth-failures.ts';
import type { KeyEntry } from '../access/keys.ts';
import type { Region, Session, SymbolRef } from '../domain.ts';
import { AppError, featureReason, isAppError } from '../errors.ts';
import { isMarketOpen, sessionState } from '../markets/calendar.ts';
import type { BatchResult, MarketDataService } from '../service/market-data.ts';
import type { FleetMember, FleetValues, StreamFleet } from './fleet.ts';
import { maxConnections, maxSubscriptions } from './limits.ts';
import type { StreamMetrics } from './metrics.ts';
import { Outbox, TEXT, type Client } from './outbox.ts';
import { ackFrame, CHANNELS, CLOSE, dataFrame, errorFrame, type Channel, type CloseCause } from './protocol.ts';

export type { Client } from './outbox.ts';

const REGIONS: readonly Region[] = ['CN', 'HK', 'US'];

function isAnonymous(entry: KeyEntry): boolean {
  return (entry as KeyEntry & { anonymous?: boolean }).anonymous === true;
}

/** Whose caps a connection counts against: its key's id, or for the free tier its client's address. */
function ownerOf(entry: KeyEntry, ip: string | undefined): string {
  return isAnonymous(entry) ? `anon:${addressBucket(ip ?? '')}` : entry.id;
}
/** setTimeout's longest delay; a key expiring later is re-checked then. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** The quotes-only route: its connections need the quotes feature. */
const LEGACY_ROUTE = '/v1/ws/quotes';
/** A reserved connection whose upgrade never completed is given back after this long, ms. */
const UNCLAIMED_MS = 10_000;

/** A connection admitted before the upgrade (hub.reserve), to be attached with it. */
export interface ConnectionTicket {
  readonly id: number;
  readonly owner: string;
  claimed: boolean;
  timer?: NodeJS.Timeout;
}

export interface StreamSettings {
  tickMs: number;
  sendBufferBytes: number;
  slowCloseMs: number;
  pingIntervalMs: number;
  /** After a session edge the market stays live this long, ms. */
  edgeGraceMs: number;
}

interface Entry {
  ref: SymbolRef;
  clients: Set<Client>;
  /** The last value pushed (or snapshotted), serialised. */
  last: string | undefined;
  /** The fleet tick `last` came from: an older tick's value arriving late is ignored. */
  slot?: number;
}

interface KeyState {
  connections: number;
  subscriptions: number;
}

type Loaded = BatchResult<unknown> & { unknown?: string[]; failed?: string[] };

export interface HubOptions {
  service: MarketDataService;
  now: () => number;
  settings: StreamSettings;
  metrics: StreamMetrics;
  log: FastifyBaseLogger;
  /** The fleet (Redis): caps across instances and workers, one refresh per symbol per tick. */
  fleet?: StreamFleet;
}

export class StreamHub {
  readonly #service: MarketDataService;
  readonly #now: () => number;
  readonly #settings: StreamSettings;
  readonly #metrics: StreamMetrics;
  readonly #log: FastifyBaseLogger;
  readonly #entries: Record<Channel, Map<string, Entry>> = { quotes: new Map(), depth: new Map() };
  readonly #clients = new Set<Client>();
  readonly #outbox: Outbox;
  readonly #keys = new Map<string, KeyState>();
  /** Each market's session at the previous tick; at the first, its session when the hub was built. */
  readonly #lastState: Partial<Record<Region, Session>> = {};
  /** When the hub was built: the first tick's reference (computed then, not at boot: ICU's zone data loads on first use). */
  readonly #builtAt: number;
  readonly #liveUntil: Record<Region, number> = { CN: 0, HK: 0, US: 0 };
  #nextId = 1;
  #timer: NodeJS.Timeout | undefined;
  #pinger: NodeJS.Timeout | undefined;
  #manual = false;
  #ticking: Promise<void> | undefined;
  #shuttingDown = false;
  readonly #fleet: StreamFleet | undefined;
  /** Connections reserved before their upgrade, not attached yet. */
  readonly #tickets = new Map<number, ConnectionTicket>();

  constructor(options: HubOptions) {
    this.#service = options.service;
    this.#now = options.now;
    this.#settings = options.settings;
    this.#metrics = options.metrics;
    this.#log = options.log;
    this.#fleet = options.fleet;
    this.#builtAt = this.#now();
    this.#outbox = new Outbox({
      sendBufferBytes: this.#settings.sendBufferBytes,
      slowCloseMs: this.#settings.slowCloseMs,
      now: this.#now,
      metrics: this.#metrics,
      log: this.#log,
      detach: (client) => this.detach(client),
    });
    const fleet = this.#fleet;
    if (fleet !== undefined) {
      fleet.onValues((values) => {
        this.#apply(values);
        this.#outbox.service(this.#now());
      });
      fleet.startHeartbeat(() => this.#fleetMembers());
    }
  }

  get settings(): StreamSettings {
    return this.#settings;
  }

  get clientCount(): number {
    return this.#clients.size;
  }

  /** Bytes queued in every client's send buffer (benchmarks wait for 0 between ticks). */
  bufferedBytes(): number {
    let total = 0;
    for (const client of this.#clients) total += client.socket.bufferedAmount;
    return total;
  }

  /** Clients currently behind (their updates conflated). */
  get behindCount(): number {
    return this.#outbox.behindCount;
  }

  /** Symbols currently refreshed on a channel (someone subscribes). */
  subscribedSymbols(channel: Channel): string[] {
    return [...this.#entries[channel].keys()];
  }

  /** Tests and benchmarks drive ticks themselves: no timers from now on. */
  manual(): void {
    this.#manual = true;
    this.#stopTimer();
    if (this.#pinger !== undefined) clearInterval(this.#pinger);
    this.#pinger = undefined;
  }

  /**
   * Whether the key may open one more connection. `ip`: the client's address, by which the free
   * tier's caps count (it has no key: each address is its own "key", an IPv6 /64 as one).
   */
  admits(entry: KeyEntry, ip?: string): boolean {
    return (this.#keys.get(ownerOf(entry, ip))?.connections ?? 0) < this.#localCap(maxConnections(entry.plan));
  }

  /**
   * Admits one more connection before the upgrade, fleet-wide when there is a fleet: a ticket to
   * attach() with, or undefined (over the cap). A ticket never attached is given back.
   */
  async reserve(entry: KeyEntry, ip?: string): Promise<ConnectionTicket | undefined> {
    if (!this.admits(entry, ip)) return undefined;
    const ticket: ConnectionTicket = { id: this.#nextId++, owner: ownerOf(entry, ip), claimed: false };
    const state = this.#keyState(ticket.owner);
    state.connections += 1;
    this.#tickets.set(ticket.id, ticket);
    const fleet = this.#fleet;
    if (fleet !== undefined) {
      const cap = maxConnections(entry.plan);
      const fleetWide = await fleet.connect(ticket.owner, fleet.member(ticket.id), cap);
      // Redis unavailable: this process's share of the cap.
      if (!(fleetWide ?? state.connections <= fleet.share(cap))) {
        this.#unreserve(ticket);
        return undefined;
      }
    }
    if (!ticket.claimed) {
      ticket.timer = setTimeout(() => this.#unreserve(ticket), UNCLAIMED_MS);
      ticket.timer.unref();
    }
    return ticket;
  }

  /** A reserved connection that will not be attached (its handshake was refused after all). */
  release(ticket: ConnectionTicket): void {
    this.#unreserve(ticket);
  }

  /** A reserved connection that was never attached: its place is given back. */
  #unreserve(ticket: ConnectionTicket): void {
    if (ticket.claimed || !this.#tickets.delete(ticket.id)) return;
    if (ticket.timer !== undefined) clearTimeout(ticket.timer);
    const state = this.#keyState(ticket.owner);
    state.connections -= 1;
    if (state.connections <= 0 && state.subscriptions <= 0) this.#keys.delete(ticket.owner);
    this.#fleet?.disconnect(ticket.owner, this.#fleet.member(ticket.id));
  }

  /** A cap as this process applies it: whole with Redis (the fleet checks too) or alone, its share while Redis is down. */
  #localCap(cap: number): number {
    const fleet = this.#fleet;
    return fleet === undefined || fleet.up ? cap : fleet.share(cap);
  }

  /** This process's members of the fleet's live sets (the heartbeat rewrites them). */
  #fleetMembers(): FleetMember[] {
    const fleet = this.#fleet as StreamFleet;
    const out: FleetMember[] = [];
    for (const client of this.#clients) {
      if (client.closed) continue;
      out.push({ owner: client.owner, member: fleet.member(client.id), subscriptions: client.subs.quotes.size + client.subs.depth.size + (client.reserved ?? 0) });
    }
    for (const ticket of this.#tickets.values()) out.push({ owner: ticket.owner, member: fleet.member(ticket.id), subscriptions: 0 });
    return out;
  }

  hasConnections(keyId: string): boolean {
    return (this.#keys.get(keyId)?.connections ?? 0) > 0;
  }

  attach(entry: KeyEntry, socket: WebSocket, route: string, ip?: string, ticket?: ConnectionTicket): Client {
    const reserved = ticket !== undefined && !ticket.claimed && this.#tickets.delete(ticket.id);
    if (reserved) {
      ticket.claimed = true;
      if (ticket.timer !== undefined) clearTimeout(ticket.timer);
    }
    const client: Client = {
      id: reserved ? ticket.id : this.#nextId++, entry, owner: reserved ? ticket.owner : ownerOf(entry, ip), socket, route,
      subs: { quotes: new Set(), depth: new Set() },
      pending: { quotes: new Map(), depth: new Map() },
      slowSince: undefined, awaitingPong: false, closed: false,
    };
    this.#clients.add(client);
    // A reserved connection is counted already (reserve); the fleet learns of others at the next heartbeat.
    if (!reserved) this.#keyState(client.owner).connections += 1;
    this.#metrics.connections.inc({ route });
    this.#scheduleExpiry(client);
    socket.on('pong', () => { client.awaitingPong = false; });
    if (!this.#manual && this.#pinger === undefined) {
      this.#pinger = setInterval(() => this.heartbeat(), this.#settings.pingIntervalMs);
      this.#pinger.unref();
    }
    return client;
  }

  detach(client: Client): void {
    if (client.closed) return;
    client.closed = true;
    if (client.expiry !== undefined) clearTimeout(client.expiry);
    client.expiry = undefined;
    this.#clients.delete(client);
    this.#outbox.forget(client);
    for (const channel of CHANNELS) this.#drop(client, channel, [...client.subs[channel]], false);
    this.#fleet?.disconnect(client.owner, this.#fleet.member(client.id));
    const state = this.#keyState(client.owner);
    state.connections -= 1;
    if (state.connections <= 0 && state.subscriptions <= 0) this.#keys.delete(client.owner);
    this.#metrics.connections.dec({ route: client.route });
    if (this.#clients.size === 0 && this.#pinger !== undefined) {
      clearInterval(this.#pinger);
      this.#pinger = undefined;
    }
  }

  /**
   * After a keys reload (every instance reloads on the published reload): each open connection's
   * key is looked up again by hash. A key that is gone closes its connections with 4401 "key
   * revoked", an expired one with 4401 "key expired"; a changed plan applies at once: a plan that
   * no longer permits the route closes with 4403, symbols of a channel or market it no longer
   * grants are unsubscribed with an error frame naming them, and past the new `max_connections`
   * the key's newest connections close with 4429, past `max_subscriptions` its newest
   * subscriptions go (an error frame again).
   */
  applyKeys(resolve: (entry: KeyEntry) => KeyEntry | undefined): void {
    const now = this.#now();
    const byKey = new Map<string, Client[]>();
    for (const client of [...this.#clients]) {
      if (client.closed) continue;
      const next = resolve(client.entry);
      if (next === undefined) {
        this.#closeWith(client, CLOSE.keyRevoked);
        continue;
      }
      if (next.expiresAt !== undefined && now >= next.expiresAt) {
        this.#closeWith(client, CLOSE.keyExpired);
        continue;
      }
      if (next !== client.entry) this.#rekey(client, next);
      this.#scheduleExpiry(client);
      if (!this.#permits(client)) continue;
      const list = byKey.get(client.owner);
      if (list === undefined) byKey.set(client.owner, [client]);
      else list.push(client);
    }
    for (const [id, clients] of byKey) this.#enforceCaps(id, clients);
  }

  sendError(client: Client, error: AppError, retryAfterMs?: number): void {
    this.#sendRaw(client, errorFrame(error, retryAfterMs));
  }

  async subscribe(client: Client, channel: Channel, refs: SymbolRef[]): Promise<void> {
    const have = client.subs[channel];
    const fresh = refs.filter((r) => !have.has(r.symbol));
    const state = this.#keyState(client.owner);
    const cap = maxSubscriptions(client.entry.plan);
    const tooMany = (held: number) => this.sendError(client, new AppError('TOO_MANY_SYMBOLS', `at most ${cap} subscriptions per key on this plan; this key has ${held} and asked for ${fresh.length} more`, {
      details: { max_subscriptions: cap, subscribed: held, requested: fresh.length },
    }));
    if (state.subscriptions + fresh.length > this.#localCap(cap)) {
      tooMany(state.subscriptions);
      return;
    }
    // Reserved before the snapshot read, so concurrent subscribes cannot overshoot the cap.
    state.subscriptions += fresh.length;
    client.reserved = (client.reserved ?? 0) + fresh.length;
    const fleet = this.#fleet;
    const member = fleet?.member(client.id);
    /** Gives back `n` of this subscribe's reservation (the fleet's too unless told otherwise). */
    const unreserve = (n: number, fleetToo = true) => {
      state.subscriptions -= n;
      client.reserved = (client.reserved ?? 0) - n;
      if (fleetToo && fleet !== undefined) fleet.release(client.owner, member as string, n);
    };
    if (fleet !== undefined && fresh.length > 0) {
      const fleetWide = await fleet.subscribe(client.owner, member as string, fresh.length, cap);
      // Redis unavailable: this process's share of the cap.
      if (fleetWide === undefined ? state.subscriptions > fleet.share(cap) : !fleetWide.ok) {
        unreserve(fresh.length, false);
        tooMany(fleetWide?.held ?? state.subscriptions - fresh.length);
        return;
      }
    }
    let loaded: Loaded | undefined;
    try {
      if (fresh.length > 0) loaded = await this.#load(channel, fresh) as Loaded;
    } catch (error) {
      unreserve(fresh.length);
      const appError = isAppError(error) ? error : new AppError('UPSTREAM_ERROR', 'the snapshot could not be read upstream');
      this.sendError(client, appError);
      return;
    }
    const added: Entry[] = [];
    const unknown: string[] = [];
    const failed: string[] = [];
    const failedSet = new Set(loaded?.failed ?? []);
    let givenBack = 0;
    for (const ref of fresh) {
      const item = loaded?.items.get(ref.symbol);
      if (item === undefined || client.closed || have.has(ref.symbol)) {
        givenBack += 1;
        if (item === undefined) (failedSet.has(ref.symbol) ? failed : unknown).push(ref.symbol);
        continue;
      }
      have.add(ref.symbol);
      let entry = this.#entries[channel].get(ref.symbol);
      if (entry === undefined) {
        entry = { ref, clients: new Set(), last: JSON.stringify(item) };
        this.#entries[channel].set(ref.symbol, entry);
      }
      entry.clients.add(client);
      this.#metrics.subscriptions.inc({ channel });
      added.push(entry);
    }
    // What was not subscribed is given back; the rest is held in client.subs from now on.
    unreserve(givenBack, !client.closed);
    client.reserved = (client.reserved ?? 0) - (fresh.length - givenBack);
    if (client.closed) return;
    const now = refs.filter((r) => have.has(r.symbol)).map((r) => r.symbol);
    if (now.length > 0) this.#sendRaw(client, ackFrame('subscribed', channel, now, have.size));
    if (added.length > 0) {
      // The snapshot is this client's own read; others learn of a change on the next tick.
      const fragments = added.map((e) => JSON.stringify(loaded?.items.get(e.ref.symbol)));
      const frame = Buffer.from(dataFrame(channel, fragments));
      this.#outbox.deliver(client, channel, frame, () => added.map((e, i) => [e.ref.symbol, fragments[i]]));
    }
    if (unknown.length > 0) {
      this.sendError(client, new AppError('SYMBOL_NOT_FOUND', `unknown symbols, not subscribed: ${unknown.slice(0, 20).join(', ')}${unknown.length > 20 ? ', …' : ''}`, {
        details: { channel, symbols: unknown.slice(0, 100) },
      }));
    }
    if (failed.length > 0) {
      this.sendError(client, new AppError('UPSTREAM_ERROR', `the upstream failed for these symbols, not subscribed; retry: ${failed.slice(0, 20).join(', ')}`, {
        details: { channel, symbols: failed.slice(0, 100) },
      }));
    }
    this.#ensureTimer();
  }

  unsubscribe(client: Client, channel: Channel, refs: SymbolRef[]): void {
    const symbols = refs.map((r) => r.symbol);
    this.#drop(client, channel, symbols.filter((s) => client.subs[channel].has(s)));
    this.#sendRaw(client, ackFrame('unsubscribed', channel, symbols, client.subs[channel].size));
  }

  /**
   * One refresh of every live subscribed symbol; overlapping calls share the running tick. `slot`:
   * the fleet's tick number (default: the wall clock's, round(Date.now() / tickMs)); with a fleet
   * this instance refreshes only the symbols it claims for that slot.
   */
  tick(slot?: number): Promise<void> {
    if (this.#ticking === undefined) {
      const at = slot ?? Math.round(Date.now() / this.#settings.tickMs);
      this.#ticking = this.#runTick(at).finally(() => { this.#ticking = undefined; });
    }
    return this.#ticking;
  }

  /** Ping every client; one that has not answered the previous ping is gone. */
  heartbeat(): void {
    for (const client of this.#clients) {
      if (client.awaitingPong) {
        client.socket.terminate();
        continue;
      }
      client.awaitingPong = true;
      client.socket.ping();
    }
  }

  /** App close: finish the running tick, then close every socket with 1001 after what is queued. */
  async shutdown(graceMs: number): Promise<void> {
    this.#shuttingDown = true;
    this.#stopTimer();
    if (this.#pinger !== undefined) clearInterval(this.#pinger);
    this.#pinger = undefined;
    await this.#ticking?.catch(() => undefined);
    const sockets = [...this.#clients].map((c) => c.socket);
    await Promise.all(sockets.map((socket) => new Promise<void>((resolve) => {
      if (socket.readyState === socket.CLOSED) return resolve();
      const timer = setTimeout(() => { socket.terminate(); resolve(); }, graceMs);
      socket.once('close', () => { clearTimeout(timer); resolve(); });
      socket.close(1001, 'server shutting down');
    })));
  }

  // -------------------------------------------------------------------------------------------

  #keyState(id: string): KeyState {
    let state = this.#keys.get(id);
    if (state === undefined) {
      state = { connections: 0, subscriptions: 0 };
      this.#keys.set(id, state);
    }
    return state;
  }

  /** Close a connection for a cause of ours: its subscriptions go at once, the socket after the close handshake. */
  #closeWith(client: Client, cause: CloseCause): void {
    this.detach(client);
    if (client.socket.readyState === client.socket.OPEN || client.socket.readyState === client.socket.CONNECTING) {
      client.socket.close(cause.code, cause.reason);
    }
  }

  #scheduleExpiry(client: Client): void {
    if (client.expiry !== undefined) clearTimeout(client.expiry);
    client.expiry = undefined;
    const at = client.entry.expiresAt;
    if (at === undefined || client.closed) return;
    const left = at - this.#now();
    if (left <= 0) {
      this.#closeWith(client, CLOSE.keyExpired);
      return;
    }
    client.expiry = setTimeout(() => this.#scheduleExpiry(client), Math.min(left, MAX_TIMER_MS));
    client.expiry.unref();
  }

  /** The key's record changed (its plan, or its id): move the per-key counts if the id did. */
  #rekey(client: Client, next: KeyEntry): void {
    const before = client.owner;
    client.entry = next;
    if (isAnonymous(next) || before === next.id) return;
    client.owner = next.id;
    const held = client.subs.quotes.size + client.subs.depth.size;
    const old = this.#keyState(before);
    old.connections -= 1;
    old.subscriptions -= held;
    if (old.connections <= 0 && old.subscriptions <= 0) this.#keys.delete(before);
    const state = this.#keyState(next.id);
    state.connections += 1;
    state.subscriptions += held;
  }

  /**
   * Whether the plan still permits the connection: false (and closed with 4403) when it grants
   * none of the route's channels; else what it no longer grants is unsubscribed, with an error.
   */
  #permits(client: Client): boolean {
    const plan = client.entry.plan;
    const legacy = client.route === LEGACY_ROUTE;
    if (legacy ? !plan.features.has('quotes') : !(plan.features.has('quotes') || plan.features.has('depth'))) {
      this.#closeWith(client, CLOSE.planForbids);
      return false;
    }
    for (const channel of CHANNELS) {
      const subs = [...client.subs[channel]];
      if (subs.length === 0) continue;
      if (!plan.features.has(channel)) {
        this.#dropWithError(client, channel, subs, new AppError(featureReason(channel), `your plan no longer includes feature ${channel}: unsubscribed ${this.#listed(subs)}`, {
          details: { plan: plan.name, missing_features: [channel], channel, symbols: subs.slice(0, 100) },
        }));
        continue;
      }
      const denied = subs.filter((symbol) => {
        const region = this.#entries[channel].get(symbol)?.ref.region;
        return region !== undefined && !plan.markets.has(region);
      });
      if (denied.length === 0) continue;
      const markets = [...new Set(denied.map((symbol) => this.#entries[channel].get(symbol)!.ref.region))];
      this.#dropWithError(client, channel, denied, new AppError('MARKET_NOT_PERMITTED', `your plan no longer includes market ${markets.join(', ')}: unsubscribed ${this.#listed(denied)}`, {
        details: { plan: plan.name, missing_markets: markets, channel, symbols: denied.slice(0, 100) },
      }));
    }
    return true;
  }

  /** A key over its plan's caps after a reload: its newest connections close, then its newest subscriptions go. */
  #enforceCaps(id: string, clients: Client[]): void {
    const plan = clients[0].entry.plan;
    const connectionCap = maxConnections(plan);
    // Newest first (clients are in attach order).
    const newest = [...clients].sort((a, b) => b.id - a.id);
    let open = this.#keys.get(id)?.connections ?? 0;
    for (const client of newest) {
      if (open <= connectionCap) break;
      this.#closeWith(client, CLOSE.tooManyConnections);
      open -= 1;
    }
    const cap = maxSubscriptions(plan);
    const state = this.#keys.get(id);
    if (state === undefined || state.subscriptions <= cap) return;
    for (const client of newest) {
      if (client.closed) continue;
      for (const channel of ['depth', 'quotes'] as const) {
        const excess = state.subscriptions - cap;
        if (excess <= 0) return;
        const subs = [...client.subs[channel]];
        const dropped = subs.slice(Math.max(0, subs.length - excess));
        if (dropped.length === 0) continue;
        this.#dropWithError(client, channel, dropped, new AppError('TOO_MANY_SYMBOLS', `your plan now allows at most ${cap} subscriptions per key: unsubscribed ${this.#listed(dropped)}`, {
          details: { max_subscriptions: cap, channel, symbols: dropped.slice(0, 100) },
        }));
      }
    }
  }

  #dropWithError(client: Client, channel: Channel, symbols: string[], error: AppError): void {
    this.#drop(client, channel, symbols);
    this.sendError(client, error);
  }

  #listed(symbols: readonly string[]): string {
    return `${symbols.slice(0, 20).join(', ')}${symbols.length > 20 ? ', …' : ''}`;
  }

  #load(channel: Channel, refs: SymbolRef[]): Promise<BatchResult<unknown>> {
    return channel === 'quotes' ? this.#service.quotes(refs) : this.#service.depth(refs);
  }

  /** `fleetToo`: give the subscriptions back in Redis too (false: the connection is going, its entry with it). */
  #drop(client: Client, channel: Channel, symbols: string[], fleetToo = true): void {
    const state = this.#keys.get(client.owner);
    let dropped = 0;
    for (const symbol of symbols) {
      if (!client.subs[channel].delete(symbol)) continue;
      dropped += 1;
      client.pending[channel].delete(symbol);
      if (state !== undefined) state.subscriptions -= 1;
      this.#metrics.subscriptions.dec({ channel });
      const entry = this.#entries[channel].get(symbol);
      if (entry === undefined) continue;
      entry.clients.delete(client);
      if (entry.clients.size === 0) this.#entries[channel].delete(symbol);
    }
    if (fleetToo && dropped > 0) this.#fleet?.release(client.owner, this.#fleet.member(client.id), dropped);
    if (this.#entries.quotes.size === 0 && this.#entries.depth.size === 0) this.#stopTimer();
  }

  #ensureTimer(): void {
    if (this.#manual || this.#shuttingDown || this.#timer !== undefined) return;
    if (this.#fleet !== undefined) {
      this.#alignedTick();
      return;
    }
    this.#timer = setInterval(() => {
      this.tick().catch((error: unknown) => this.#log.error({ err: error }, 'stream tick failed'));
    }, this.#settings.tickMs);
    this.#timer.unref();
  }

  /** Fleet ticks fall on the wall clock's multiples of tickMs, the same moments on every instance. */
  #alignedTick(): void {
    const every = this.#settings.tickMs;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      const slot = Math.round(Date.now() / every);
      this.#ensureTimer();
      this.tick(slot).catch((error: unknown) => this.#log.error({ err: error }, 'stream tick failed'));
    }, every - (Date.now() % every));
    this.#timer.unref();
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #liveRegions(now: number): Record<Region, boolean> {
    const live = {} as Record<Region, boolean>;
    for (const region of REGIONS) {
      const state = sessionState(region, now);
      const last = this.#lastState[region] ?? sessionState(region, this.#builtAt);
      this.#lastState[region] = last;
      if (state !== last) {
        this.#lastState[region] = state;
        this.#liveUntil[region] = now + this.#settings.edgeGraceMs;
      }
      live[region] = isMarketOpen(region, now) || now <= this.#liveUntil[region];
    }
    return live;
  }

  async #runTick(slot: number): Promise<void> {
    const now = this.#now();
    const live = this.#liveRegions(now);
    const fleet = this.#fleet;
    await Promise.all(CHANNELS.map(async (channel) => {
      let entries = [...this.#entries[channel].values()].filter((e) => live[e.ref.region]);
      if (entries.length === 0) return;
      // With the fleet up: only the symbols this instance claims for the slot; the rest arrive
      // from the instances that claimed them. Redis unavailable: this instance refreshes all.
      const claimed = fleet !== undefined && fleet.up ? await fleet.claim(channel, slot, entries.map((e) => e.ref.symbol)) : undefined;
      if (claimed !== undefined) {
        const mine = new Set(claimed);
        entries = entries.filter((e) => mine.has(e.ref.symbol));
        if (entries.length === 0) return;
      }
      let result: BatchResult<unknown>;
      try {
        result = await this.#load(channel, entries.map((e) => e.ref));
      } catch (error) {
        // Subscribers keep their last values; the next tick tries again.
        this.#log.warn({ err: error, channel }, 'stream refresh failed upstream');
        return;
      }
      this.#metrics.refreshes.inc({ channel });
      const values: [string, string][] = [];
      for (const entry of entries) {
        const item = result.items.get(entry.ref.symbol);
        if (item !== undefined) values.push([entry.ref.symbol, JSON.stringify(item)]);
      }
      const refreshed: FleetValues = { channel, slot, values };
      if (claimed !== undefined) fleet?.publish(refreshed);
      this.#apply(refreshed);
    }));
    this.#outbox.service(this.#now());
  }

  /** Values of a tick (this instance's refresh, or another's through the fleet) to the subscribers. */
  #apply({ channel, slot, values }: FleetValues): void {
    const changed: Entry[] = [];
    for (const [symbol, json] of values) {
      const entry = this.#entries[channel].get(symbol);
      if (entry === undefined || (entry.slot !== undefined && slot < entry.slot)) continue;
      entry.slot = slot;
      if (json === entry.last) continue;
      entry.last = json;
      if (entry.clients.size > 0) changed.push(entry);
    }
    this.#fanout(channel, changed);
  }

  #fanout(channel: Channel, changed: Entry[]): void {
    if (changed.length === 0) return;
    const perClient = new Map<Client, Entry[]>();
    for (const entry of changed) {
      for (const client of entry.clients) {
        const list = perClient.get(client);
        if (list === undefined) perClient.set(client, [entry]);
        else list.push(entry);
      }
    }
    // Clients with the same changed subset share one frame; usually that is all of them.
    const frames = new Map<string, Buffer>();
    for (const [client, list] of perClient) {
      const key = list.length === changed.length ? '*' : list.map((e) => e.ref.symbol).join(',');
      let frame = frames.get(key);
      if (frame === undefined) {
        frame = Buffer.from(dataFrame(channel, list.map((e) => e.last as string)));
        frames.set(key, frame);
      }
      this.#outbox.deliver(client, channel, frame, () => list.map((e) => [e.ref.symbol, e.last as string]));
    }
  }

  #sendRaw(client: Client, text: string): void {
    if (client.closed || client.socket.readyState !== client.socket.OPEN) return;
    client.socket.send(text, TEXT);
  }
}
