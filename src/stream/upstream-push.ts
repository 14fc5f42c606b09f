// Upstream push: where the adapter that serves a channel in a market (the first of its routing
// chain) has a push feed (Adapter.openPush, e.g. TickFlow's /v1/ws/stream), the stream subscribes
// there instead of polling. Fleet-wide once per symbol: at each tick an instance whose feed is
// connected claims the push leases of its live symbols (fleet.ts); the symbols it holds it
// subscribes upstream, numbers what the vendor pushes and publishes it, so every instance fans
// it out as it does a refresh. No instance polls a symbol someone holds. A feed that is lost
// gives its leases up at once and its symbols are polled again from the next tick (by whichever
// instance claims the tick), until the feed is back and claims them again.
//
// Modes, per adapter with a feed, in /readyz (`stream.upstream`) and /metrics
// (`mdqs_stream_upstream_mode`): idle (no subscriber has needed it yet), push (the feed is
// connected), polling (the feed is down: its reason and since when).
import type { FastifyBaseLogger } from 'fastify';
import type { Adapter, PushFeed } from '../../adapters/types.ts';
import type { Region, SymbolRef } from '../domain.ts';
import type { ReadinessCheck } from '../health.ts';
import type { StreamFleet } from './fleet.ts';
import type { StreamMetrics } from './metrics.ts';
import { CHANNELS, type Channel } from './protocol.ts';

export type PushMode = 'idle' | 'push' | 'polling';
export const PUSH_MODES: readonly PushMode[] = ['idle', 'push', 'polling'];

export interface UpstreamPushOptions {
  /** Adapters by id (those without openPush are never asked). */
  adapters: ReadonlyMap<string, Adapter>;
  /** The configured chain of a channel's resource in a market (router.configuredChain). */
  chain: (channel: Channel, region: Region) => readonly string[];
  fleet?: StreamFleet;
  /** How long a push lease lives without its holder's renewal (each tick), ms. */
  leaseMs: number;
  now: () => number;
  metrics: StreamMetrics;
  log: FastifyBaseLogger;
  /** Values pushed for symbols this instance holds, normalised and keyed by symbol. */
  values: (channel: Channel, items: ReadonlyMap<string, unknown>) => void;
}

interface AdapterPush {
  id: string;
  feed: PushFeed;
  mode: PushMode;
  since: number;
  reason?: string;
  /** Symbols subscribed upstream by this instance (it holds their leases). */
  upstream: Record<Channel, Set<string>>;
}

export class UpstreamPush {
  readonly #o: UpstreamPushOptions;
  readonly #pushes = new Map<string, AdapterPush>();

  constructor(options: UpstreamPushOptions) {
    this.#o = options;
    for (const adapter of options.adapters.values()) {
      if (adapter.openPush === undefined) continue;
      const push: AdapterPush = {
        id: adapter.id, feed: undefined as unknown as PushFeed, mode: 'idle', since: options.now(),
        upstream: { quotes: new Set(), depth: new Set() },
      };
      push.feed = adapter.openPush({
        quotes: (items) => this.#pushed(push, 'quotes', items),
        depth: (items) => this.#pushed(push, 'depth', items),
        state: (connected, reason) => this.#state(push, connected, reason),
        problem: (reason) => options.log.warn({ adapter: adapter.id, reason }, 'stream: upstream push message dropped'),
      });
      this.#pushes.set(adapter.id, push);
      this.#setMode(push, 'idle');
    }
  }

  /** Whether any adapter has a push feed. */
  get enabled(): boolean {
    return this.#pushes.size > 0;
  }

  /**
   * At a tick, `refs`: the live symbols of `channel` subscribed here. Claims (or renews) the
   * leases of those a connected feed serves, subscribes and unsubscribes upstream to match, and
   * returns the symbols that a push serves (here or on another instance): none of them is polled.
   */
  async partition(channel: Channel, refs: readonly SymbolRef[]): Promise<Set<string>> {
    const served = new Set<string>();
    const byPush = new Map<AdapterPush, SymbolRef[]>();
    for (const ref of refs) {
      const push = this.#pushes.get(this.#o.chain(channel, ref.region)[0] ?? '');
      if (push === undefined) continue;
      const list = byPush.get(push);
      if (list === undefined) byPush.set(push, [ref]);
      else list.push(ref);
    }
    for (const push of this.#pushes.values()) {
      const wanted = byPush.get(push) ?? [];
      if (wanted.length > 0) push.feed.start();
      const connected = push.feed.connected;
      const symbols = wanted.map((r) => r.symbol);
      const fleet = this.#o.fleet;
      const leases = fleet !== undefined && fleet.up && symbols.length > 0 ? await fleet.pushLeases(channel, symbols, connected, this.#o.leaseMs) : undefined;
      // Redis unavailable (or no fleet): this instance alone, everything it needs when connected.
      const mine = new Set(leases?.mine ?? (connected ? symbols : []));
      for (const symbol of leases?.taken ?? []) served.add(symbol);
      for (const symbol of mine) served.add(symbol);
      // Upstream to match: what this instance holds now, nothing else.
      const had = push.upstream[channel];
      const dropped = [...had].filter((s) => !mine.has(s));
      const added = wanted.filter((r) => mine.has(r.symbol) && !had.has(r.symbol));
      if (dropped.length > 0) {
        for (const s of dropped) had.delete(s);
        push.feed.unsubscribe(channel, dropped);
        // Given back at once, so an instance still subscribing takes them at its next tick.
        if (fleet !== undefined && fleet.up) void fleet.pushLeases(channel, dropped, false, this.#o.leaseMs);
      }
      if (added.length > 0) {
        for (const r of added) had.add(r.symbol);
        push.feed.subscribe(channel, added);
      }
      this.#o.metrics.upstreamSymbols.set({ adapter: push.id, channel }, had.size);
    }
    return served;
  }

  /** Each adapter's mode, since when, why (polling) and the symbols it holds upstream here. */
  status(): Record<string, { mode: PushMode; since: string; reason?: string; symbols: Record<Channel, number> }> {
    const out: ReturnType<UpstreamPush['status']> = {};
    for (const push of this.#pushes.values()) {
      out[push.id] = {
        mode: push.mode, since: new Date(push.since).toISOString(), ...(push.reason === undefined ? {} : { reason: push.reason }),
        symbols: { quotes: push.upstream.quotes.size, depth: push.upstream.depth.size },
      };
    }
    return out;
  }

  /** /readyz `stream`: the modes; a lost feed is `degraded` (polling works on), never not ready. */
  readiness(): ReadinessCheck {
    return {
      name: 'stream',
      run: async () => {
        const polling = [...this.#pushes.values()].filter((p) => p.mode === 'polling');
        const first = polling[0];
        return {
          ready: true,
          detail: { upstream: this.status() },
          ...(first === undefined ? {} : {
            degraded: { problem: `upstream push feed down (${polling.map((p) => `${p.id}: ${p.reason ?? 'down'}`).join('; ')}): polling`, since: Math.min(...polling.map((p) => p.since)) },
          }),
        };
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pushes.values()].map((p) => p.feed.close()));
  }

  #setMode(push: AdapterPush, mode: PushMode, reason?: string): void {
    if (push.mode !== mode) push.since = this.#o.now();
    push.mode = mode;
    push.reason = reason;
    for (const m of PUSH_MODES) this.#o.metrics.upstreamMode.set({ adapter: push.id, mode: m }, m === mode ? 1 : 0);
  }

  #state(push: AdapterPush, connected: boolean, reason?: string): void {
    if (connected) {
      this.#o.log.info({ adapter: push.id }, 'stream: upstream push feed connected');
      this.#setMode(push, 'push');
      return;
    }
    if (push.mode === 'push') this.#o.log.warn({ adapter: push.id, reason }, 'stream: upstream push feed lost, polling');
    this.#setMode(push, 'polling', reason ?? 'down');
    // Its symbols are given up at once: polled from the next tick, here or by whoever claims it.
    const fleet = this.#o.fleet;
    for (const channel of CHANNELS) {
      const symbols = [...push.upstream[channel]];
      push.upstream[channel].clear();
      if (symbols.length === 0) continue;
      push.feed.unsubscribe(channel, symbols);
      this.#o.metrics.upstreamSymbols.set({ adapter: push.id, channel }, 0);
      if (fleet !== undefined && fleet.up) void fleet.pushLeases(channel, symbols, false, this.#o.leaseMs);
    }
  }

  #pushed(push: AdapterPush, channel: Channel, items: ReadonlyMap<string, unknown>): void {
    const held = push.upstream[channel];
    const mine = new Map<string, unknown>();
    for (const [symbol, value] of items) if (held.has(symbol)) mine.set(symbol, value);
    this.#o.metrics.upstreamPushed.inc({ adapter: push.id, channel }, mine.size);
    if (mine.size > 0) this.#o.values(channel, mine);
  }
}
