// The tick source: when the stream refreshes (a timer, or fleet ticks aligned to the wall clock),
// which markets are live at a tick, and the batched read of a channel's symbols through the
// service (the same loader and caches as REST).
//
// A symbol is refreshed only while its market is live: in a regular session, or for a short grace
// after a session edge (open, lunch, close) so the value that was current at the edge arrives even
// when the cache still held the one before it.
import type { FastifyBaseLogger } from 'fastify';
import type { Market, Session, SymbolRef } from '../domain.ts';
import { isMarketOpen, sessionState } from '../markets/calendar.ts';
import type { BatchResult, MarketDataService } from '../service/market-data.ts';
import type { Channel } from './protocol.ts';

// CN_FUTURES is live while any futures product trades (its night sessions included).
const REGIONS: readonly Market[] = ['CN', 'HK', 'US', 'CN_FUTURES'];

export interface TickSourceOptions {
  service: MarketDataService;
  now: () => number;
  tickMs: number;
  /** After a session edge the market stays live this long, ms. */
  edgeGraceMs: number;
  /** Fleet ticks: aligned to the wall clock so every instance ticks at the same moments. */
  aligned: boolean;
  log: FastifyBaseLogger;
}

export class TickSource {
  readonly #o: TickSourceOptions;
  /** Each market's session at the previous tick; at the first, its session when the source was built. */
  readonly #lastState: Partial<Record<Market, Session>> = {};
  /** When the source was built: the first tick's reference (computed then, not at boot: ICU's zone data loads on first use). */
  readonly #builtAt: number;
  readonly #liveUntil: Record<Market, number> = { CN: 0, HK: 0, US: 0, CN_FUTURES: 0 };
  #timer: NodeJS.Timeout | undefined;
  #manual = false;
  #stopped = false;

  constructor(options: TickSourceOptions) {
    this.#o = options;
    this.#builtAt = options.now();
  }

  /** Tests and benchmarks drive ticks themselves: no timers from now on. */
  manual(): void {
    this.#manual = true;
    this.stop();
  }

  /** No more timers (app close). */
  halt(): void {
    this.#stopped = true;
    this.stop();
  }

  /** The fleet's slot at the wall clock's now. */
  slotNow(): number {
    return Math.round(Date.now() / this.#o.tickMs);
  }

  /** Starts the timer unless it runs; `tick(slot)` runs at each tick. */
  ensure(tick: (slot: number) => Promise<void>): void {
    if (this.#manual || this.#stopped || this.#timer !== undefined) return;
    const run = (slot: number) => tick(slot).catch((error: unknown) => this.#o.log.error({ err: error }, 'stream tick failed'));
    if (this.#o.aligned) {
      // Fleet ticks fall on the wall clock's multiples of tickMs, the same moments on every instance.
      const every = this.#o.tickMs;
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        const slot = this.slotNow();
        this.ensure(tick);
        void run(slot);
      }, every - (Date.now() % every));
    } else {
      this.#timer = setInterval(() => void run(this.slotNow()), this.#o.tickMs);
    }
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Which markets are live at `now` (in session, or within the grace after an edge). */
  liveRegions(now: number): Record<Market, boolean> {
    const live = {} as Record<Market, boolean>;
    for (const region of REGIONS) {
      const state = sessionState(region, now);
      const last = this.#lastState[region] ?? sessionState(region, this.#builtAt);
      this.#lastState[region] = last;
      if (state !== last) {
        this.#lastState[region] = state;
        this.#liveUntil[region] = now + this.#o.edgeGraceMs;
      }
      live[region] = isMarketOpen(region, now) || now <= this.#liveUntil[region];
    }
    return live;
  }

  /** One batched read of `refs` on `channel` (a subscribe's snapshot or a tick's refresh). */
  load(channel: Channel, refs: SymbolRef[]): Promise<BatchResult<unknown>> {
    return channel === 'quotes' ? this.#o.service.quotes(refs) : this.#o.service.depth(refs);
  }
}
