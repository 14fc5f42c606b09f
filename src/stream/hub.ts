// The stream hub: connections in and out, subscribe and unsubscribe, and each tick's values to
// the subscribers. Its parts, each in a module of its own: who subscribes to what and the fan-out
// (subscriptions.ts), when ticks happen and what a tick reads (tick-source.ts), sequence numbers
// and the replay log (sequencer.ts), resuming from it (resume.ts), pings and heartbeats
// (liveness.ts), the per-key caps (caps.ts, limits.ts), keys reloads (key-changes.ts),
// back-pressure (outbox.ts).
//
// With a fleet (fleet.ts, Redis configured), the caps count every instance's and worker's
// connections, and ticks are the fleet's: aligned to the wall clock, each symbol refreshed by one
// instance per tick and its value pushed by all.
//
// Where the vendor pushes (upstream-push.ts), the symbols its feed serves are not polled: the
// instance holding a symbol's push lease numbers and publishes what the vendor sends, as it would
// a refresh.
import type { FastifyBaseLogger } from 'fastify';
import type WebSocket from 'ws';
import type { KeyEntry } from '../access/keys.ts';
import type { SymbolRef } from '../domain.ts';
import { marketOf } from '../markets/symbols.ts';
import { AppError, isAppError } from '../errors.ts';
import type { BatchResult, MarketDataService } from '../service/market-data.ts';
import { ownerOf, StreamCaps, type ConnectionTicket } from './caps.ts';
import type { FleetMember, FleetValues, StreamFleet } from './fleet.ts';
import { applyKeys, type KeyChangeHost } from './key-changes.ts';
import { maxSubscriptions } from './limits.ts';
import type { StreamMetrics } from './metrics.ts';
import { Outbox, TEXT, type Client } from './outbox.ts';
import { Liveness } from './liveness.ts';
import { ackFrame, CHANNELS, CLOSE, dataFrame, errorFrame, type Channel, type CloseCause } from './protocol.ts';
import { resume } from './resume.ts';
import { Sequencer, withSeq } from './sequencer.ts';
import { fanout, Subscriptions, type Entry } from './subscriptions.ts';
import { TickSource } from './tick-source.ts';
import type { UpstreamPush } from './upstream-push.ts';

export type { Client } from './outbox.ts';
export type { ConnectionTicket } from './caps.ts';

/** setTimeout's longest delay; a key expiring later is re-checked then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface StreamSettings {
  tickMs: number;
  sendBufferBytes: number;
  slowCloseMs: number;
  pingIntervalMs: number;
  /** After a session edge the market stays live this long, ms. */
  edgeGraceMs: number;
  /** The application-level heartbeat (`{"op":"heartbeat",...}`), ms. */
  heartbeatMs: number;
}

/** mdqs_stream_closed_total's reason of each close code of ours. */
const CLOSE_REASONS: Record<number, string> = { 4401: 'key_revoked', 4403: 'plan_forbids', 4429: 'too_many_connections' };

type Loaded = BatchResult<unknown> & { unknown?: string[]; failed?: string[] };

export interface HubOptions {
  service: MarketDataService;
  now: () => number;
  settings: StreamSettings;
  metrics: StreamMetrics;
  log: FastifyBaseLogger;
  /** The fleet (Redis): caps across instances and workers, one refresh per symbol per tick. */
  fleet?: StreamFleet;
  /** Sequence numbers and the replay log (in process when not given). */
  sequencer?: Sequencer;
  /**
   * Whether updates carry `seq` and resumes read the replay log (stream.sequence; default true).
   * Off: elements without `seq`, nothing logged, a `since` is a plain subscribe.
   */
  numbered?: boolean;
  /** Vendors' push feeds (upstream-push.ts): the symbols they serve are not polled. */
  push?: UpstreamPush;
}

export class StreamHub {
  readonly #now: () => number;
  readonly #settings: StreamSettings;
  readonly #metrics: StreamMetrics;
  readonly #log: FastifyBaseLogger;
  readonly #subscriptions: Subscriptions;
  readonly #clients = new Set<Client>();
  readonly #outbox: Outbox;
  readonly #caps: StreamCaps;
  readonly #source: TickSource;
  readonly #fleet: StreamFleet | undefined;
  readonly #sequencer: Sequencer;
  readonly #liveness: Liveness;
  readonly #numbered: boolean;
  readonly #push: UpstreamPush | undefined;
  /** Pushed values not yet numbered, latest per symbol (conflated while the previous batch is numbered). */
  readonly #pushPending: Record<Channel, Map<string, unknown>> = { quotes: new Map(), depth: new Map() };
  readonly #pushDraining: Record<Channel, boolean> = { quotes: false, depth: false };
  #manual = false;
  #ticking: Promise<void> | undefined;

  constructor(options: HubOptions) {
    this.#now = options.now;
    this.#settings = options.settings;
    this.#metrics = options.metrics;
    this.#log = options.log;
    this.#fleet = options.fleet;
    this.#numbered = options.numbered ?? true;
    this.#push = options.push;
    this.#subscriptions = new Subscriptions(this.#numbered);
    this.#caps = new StreamCaps(options.fleet);
    this.#sequencer = options.sequencer ?? new Sequencer({ settings: { maxLength: 600, maxAgeMs: 300_000 }, now: options.now });
    this.#source = new TickSource({
      service: options.service,
      now: options.now,
      tickMs: options.settings.tickMs,
      edgeGraceMs: options.settings.edgeGraceMs,
      aligned: options.fleet !== undefined,
      log: options.log,
    });
    this.#liveness = new Liveness({
      clients: this.#clients,
      subscriptions: this.#subscriptions,
      now: options.now,
      pingIntervalMs: options.settings.pingIntervalMs,
      heartbeatMs: options.settings.heartbeatMs,
      send: (client, text) => this.#sendRaw(client, text),
    });
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
    return this.#subscriptions.symbols(channel);
  }

  /** Tests and benchmarks drive ticks themselves: no timers from now on. */
  manual(): void {
    this.#manual = true;
    this.#source.manual();
    this.#liveness.stop();
  }

  /** Every client's `{"op":"heartbeat",...}` now (liveness.ts). */
  beat(): void {
    this.#liveness.beat();
  }

  /**
   * Whether the key may open one more connection. `ip`: the client's address, by which the free
   * tier's caps count (it has no key: each address is its own "key", an IPv6 /64 as one).
   */
  admits(entry: KeyEntry, ip?: string): boolean {
    return this.#caps.admits(entry, ip);
  }

  /**
   * Admits one more connection before the upgrade, fleet-wide when there is a fleet: a ticket to
   * attach() with, or undefined (over the cap). A ticket never attached is given back.
   */
  reserve(entry: KeyEntry, ip?: string): Promise<ConnectionTicket | undefined> {
    return this.#caps.reserve(entry, ip);
  }

  /** A reserved connection that will not be attached (its handshake was refused after all). */
  release(ticket: ConnectionTicket): void {
    this.#caps.unreserve(ticket);
  }

  /** This process's members of the fleet's live sets (the heartbeat rewrites them). */
  #fleetMembers(): FleetMember[] {
    const fleet = this.#fleet as StreamFleet;
    const out: FleetMember[] = [];
    for (const client of this.#clients) {
      if (client.closed) continue;
      out.push({ owner: client.owner, member: fleet.member(client.id), subscriptions: client.subs.quotes.size + client.subs.depth.size + (client.reserved ?? 0) });
    }
    out.push(...this.#caps.ticketMembers(fleet));
    return out;
  }

  hasConnections(keyId: string): boolean {
    return (this.#caps.peek(keyId)?.connections ?? 0) > 0;
  }

  attach(entry: KeyEntry, socket: WebSocket, route: string, ip?: string, ticket?: ConnectionTicket): Client {
    const reserved = this.#caps.claim(ticket);
    const client: Client = {
      id: reserved ? ticket.id : this.#caps.nextId(), entry, owner: reserved ? ticket.owner : ownerOf(entry, ip), socket, route,
      subs: { quotes: new Set(), depth: new Set() },
      pending: { quotes: new Map(), depth: new Map() },
      slowSince: undefined, awaitingPong: false, closed: false,
    };
    this.#clients.add(client);
    // A reserved connection is counted already (reserve); the fleet learns of others at the next heartbeat.
    if (!reserved) this.#caps.state(client.owner).connections += 1;
    this.#metrics.connections.inc({ route });
    this.#scheduleExpiry(client);
    socket.on('pong', () => { client.awaitingPong = false; });
    if (!this.#manual) this.#liveness.start();
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
    this.#caps.state(client.owner).connections -= 1;
    this.#caps.tidy(client.owner);
    this.#metrics.connections.dec({ route: client.route });
    this.#metrics.closed.inc({ reason: client.closeReason ?? 'client' });
    if (this.#clients.size === 0) this.#liveness.stop();
  }

  /** After a keys reload: each open connection's key looked up again (key-changes.ts). */
  applyKeys(resolve: (entry: KeyEntry) => KeyEntry | undefined): void {
    const host: KeyChangeHost = {
      now: this.#now,
      caps: this.#caps,
      subscriptions: this.#subscriptions,
      closeWith: (client, cause) => this.#closeWith(client, cause),
      drop: (client, channel, symbols) => this.#drop(client, channel, symbols),
      sendError: (client, error) => this.sendError(client, error),
      scheduleExpiry: (client) => this.#scheduleExpiry(client),
    };
    applyKeys(host, this.#clients, resolve);
  }

  sendError(client: Client, error: AppError, retryAfterMs?: number): void {
    this.#sendRaw(client, errorFrame(error, retryAfterMs));
  }

  /** `since`: a resume, the last seq the client saw per symbol (those get what they missed, not a snapshot). */
  async subscribe(client: Client, channel: Channel, refs: SymbolRef[], sinceAsked?: Map<string, number>): Promise<void> {
    const since = this.#numbered ? sinceAsked : undefined;
    const have = client.subs[channel];
    const fresh = refs.filter((r) => !have.has(r.symbol));
    const state = this.#caps.state(client.owner);
    const cap = maxSubscriptions(client.entry.plan);
    const tooMany = (held: number) => this.sendError(client, new AppError('TOO_MANY_SYMBOLS', `at most ${cap} subscriptions per key on this plan; this key has ${held} and asked for ${fresh.length} more`, {
      details: { max_subscriptions: cap, subscribed: held, requested: fresh.length },
    }));
    if (state.subscriptions + fresh.length > this.#caps.localCap(cap)) {
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
    let seqs: number[] = [];
    try {
      if (fresh.length > 0) {
        // The seq of a symbol no one here subscribes to yet: the fleet's latest.
        const unseen = fresh.filter((r) => this.#subscriptions.get(channel, r.symbol) === undefined).map((r) => r.symbol);
        [loaded, seqs] = await Promise.all([this.#source.load(channel, fresh) as Promise<Loaded>, this.#numbered ? this.#sequencer.latest(channel, unseen) : unseen.map(() => 0)]);
        const latest = new Map(unseen.map((symbol, i) => [symbol, seqs[i]]));
        seqs = fresh.map((r) => latest.get(r.symbol) ?? this.#subscriptions.get(channel, r.symbol)?.seq ?? 0);
      }
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
    // Resumed symbols: live updates are held from the moment they are subscribed until the replay is out.
    const resumed = new Map<string, number>();
    for (const [i, ref] of fresh.entries()) {
      const item = loaded?.items.get(ref.symbol);
      if (item === undefined || client.closed || have.has(ref.symbol)) {
        givenBack += 1;
        if (item === undefined) (failedSet.has(ref.symbol) ? failed : unknown).push(ref.symbol);
        continue;
      }
      have.add(ref.symbol);
      const entry = this.#subscriptions.add(channel, ref, client, JSON.stringify(item), seqs[i]);
      this.#metrics.subscriptions.inc({ channel });
      const from = since?.get(ref.symbol);
      if (from === undefined) {
        added.push(entry);
        continue;
      }
      resumed.set(ref.symbol, from);
      client.resuming ??= { quotes: new Map(), depth: new Map() };
      client.resuming[channel].set(ref.symbol, []);
    }
    // What was not subscribed is given back; the rest is held in client.subs from now on.
    unreserve(givenBack, !client.closed);
    client.reserved = (client.reserved ?? 0) - (fresh.length - givenBack);
    if (client.closed) return;
    const now = refs.filter((r) => have.has(r.symbol)).map((r) => r.symbol);
    if (now.length > 0) this.#sendRaw(client, ackFrame('subscribed', channel, now, have.size));
    if (added.length > 0) {
      // The snapshot is this client's own read (with the symbol's last seq); others learn of a change on the next tick.
      const fragments = added.map((e) => this.#element(JSON.stringify(loaded?.items.get(e.ref.symbol)), e.seq));
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
    this.#source.ensure((slot) => this.tick(slot));
    if (resumed.size > 0) {
      const parts = { sequencer: this.#sequencer, subscriptions: this.#subscriptions, outbox: this.#outbox, metrics: this.#metrics };
      await resume(parts, client, channel, resumed, (loaded as Loaded).items);
    }
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
      const at = slot ?? this.#source.slotNow();
      this.#ticking = this.#runTick(at).finally(() => { this.#ticking = undefined; });
    }
    return this.#ticking;
  }

  /** Ping every client; one that has not answered the previous ping is gone (liveness.ts). */
  heartbeat(): void {
    this.#liveness.ping();
  }

  /** App close: finish the running tick, then close every socket with 1001 after what is queued. */
  async shutdown(graceMs: number): Promise<void> {
    this.#source.halt();
    this.#liveness.stop();
    await this.#ticking?.catch(() => undefined);
    for (const client of this.#clients) client.closeReason = 'shutdown';
    const sockets = [...this.#clients].map((c) => c.socket);
    await Promise.all(sockets.map((socket) => new Promise<void>((resolve) => {
      if (socket.readyState === socket.CLOSED) return resolve();
      const timer = setTimeout(() => { socket.terminate(); resolve(); }, graceMs);
      socket.once('close', () => { clearTimeout(timer); resolve(); });
      socket.close(1001, 'server shutting down');
    })));
  }

  // -------------------------------------------------------------------------------------------

  /** Close a connection for a cause of ours: its subscriptions go at once, the socket after the close handshake. */
  #closeWith(client: Client, cause: CloseCause): void {
    client.closeReason = cause === CLOSE.keyExpired ? 'key_expired' : CLOSE_REASONS[cause.code];
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

  /** `fleetToo`: give the subscriptions back in Redis too (false: the connection is going, its entry with it). */
  #drop(client: Client, channel: Channel, symbols: string[], fleetToo = true): void {
    const state = this.#caps.peek(client.owner);
    let dropped = 0;
    for (const symbol of symbols) {
      if (!client.subs[channel].delete(symbol)) continue;
      dropped += 1;
      client.pending[channel].delete(symbol);
      if (state !== undefined) state.subscriptions -= 1;
      this.#metrics.subscriptions.dec({ channel });
      client.resuming?.[channel].delete(symbol);
      if (this.#subscriptions.remove(channel, symbol, client)) this.#sequencer.forget(channel, symbol);
    }
    if (fleetToo && dropped > 0) this.#fleet?.release(client.owner, this.#fleet.member(client.id), dropped);
    if (this.#subscriptions.empty) this.#source.stop();
  }

  async #runTick(slot: number): Promise<void> {
    const now = this.#now();
    const live = this.#source.liveRegions(now);
    const fleet = this.#fleet;
    await Promise.all(CHANNELS.map(async (channel) => {
      let entries = [...this.#subscriptions.entries(channel)].filter((e) => live[marketOf(e.ref)]);
      // What a vendor's push serves (here or on another instance) is not polled.
      const pushed = this.#push?.enabled === true ? await this.#push.partition(channel, entries.map((e) => e.ref)) : undefined;
      if (pushed !== undefined && pushed.size > 0) entries = entries.filter((e) => !pushed.has(e.ref.symbol));
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
        result = await this.#source.load(channel, entries.map((e) => e.ref));
      } catch (error) {
        // Subscribers keep their last values; the next tick tries again.
        this.#log.warn({ err: error, channel }, 'stream refresh failed upstream');
        return;
      }
      this.#metrics.refreshes.inc({ channel });
      // Only changes are updates: each is numbered (and logged) once, here, for the whole fleet.
      const changes: [string, string, number][] = [];
      for (const entry of entries) {
        const item = result.items.get(entry.ref.symbol);
        if (item === undefined) continue;
        const json = JSON.stringify(item);
        if (json !== entry.raw) changes.push([entry.ref.symbol, json, entry.seq]);
      }
      if (changes.length === 0) return;
      const seqs = await this.#number(channel, changes);
      const refreshed: FleetValues = { channel, slot, values: changes.map(([symbol, json], i) => [symbol, json, seqs[i]]) };
      if (claimed !== undefined) fleet?.publish(refreshed);
      this.#apply(refreshed);
    }));
    this.#outbox.service(this.#now());
  }

  /** Values of a tick (this instance's refresh, or another's through the fleet) to the subscribers. */
  #apply({ channel, values }: FleetValues): void {
    const changed: Entry[] = [];
    for (const [symbol, json, seq] of values) {
      const entry = this.#subscriptions.get(channel, symbol);
      // An update already applied (or older than one that was) is not sent again.
      if (entry === undefined || seq <= entry.seq) continue;
      entry.seq = seq;
      entry.raw = json;
      entry.last = this.#element(json, seq);
      if (entry.clients.size > 0) changed.push(entry);
    }
    fanout(this.#outbox, channel, changed);
  }

  /**
   * Values a vendor pushed for symbols this instance holds upstream: numbered and published as a
   * tick's refresh would be. Batches are numbered one at a time per channel; what arrives
   * meanwhile waits, the latest value per symbol.
   */
  pushed(channel: Channel, items: ReadonlyMap<string, unknown>): void {
    const pending = this.#pushPending[channel];
    for (const [symbol, value] of items) pending.set(symbol, value);
    if (this.#pushDraining[channel]) return;
    this.#pushDraining[channel] = true;
    void (async () => {
      try {
        while (pending.size > 0) {
          const batch = [...pending];
          pending.clear();
          await this.#publishPushed(channel, batch);
        }
      } catch (error) {
        this.#log.warn({ err: error, channel }, 'stream: pushed values could not be sent');
      } finally {
        this.#pushDraining[channel] = false;
      }
    })();
  }

  async #publishPushed(channel: Channel, batch: [string, unknown][]): Promise<void> {
    const changes: [string, string, number][] = [];
    for (const [symbol, value] of batch) {
      const entry = this.#subscriptions.get(channel, symbol);
      if (entry === undefined) continue;
      const json = JSON.stringify(value);
      if (json !== entry.raw) changes.push([symbol, json, entry.seq]);
    }
    if (changes.length === 0) return;
    const seqs = await this.#number(channel, changes);
    const values: FleetValues = { channel, slot: this.#source.slotNow(), values: changes.map(([symbol, json], i) => [symbol, json, seqs[i]]) };
    if (this.#fleet?.up === true) this.#fleet.publish(values);
    this.#apply(values);
    this.#outbox.service(this.#now());
  }

  /** Each change's number: the sequencer's (and its replay log), or with stream.sequence off the next one here. */
  #number(channel: Channel, changes: [string, string, number][]): Promise<number[]> {
    return this.#numbered ? this.#sequencer.append(channel, changes) : Promise.resolve(changes.map(([, , last]) => last + 1));
  }

  /** A pushed element: the value with its `seq` (stream.sequence off: as it is). */
  #element(json: string, seq: number): string {
    return this.#numbered ? withSeq(json, seq) : json;
  }

  #sendRaw(client: Client, text: string): void {
    if (client.closed || client.socket.readyState !== client.socket.OPEN) return;
    client.socket.send(text, TEXT);
  }
}
