// Who subscribes to what: per channel, each subscribed symbol's entry (its subscribers and the
// last value pushed, serialised), and the fan-out of a tick's changed entries, where every
// distinct frame is serialised once and the same bytes go to every client that needs them.
import type { SymbolRef } from '../domain.ts';
import type { Client, Outbox } from './outbox.ts';
import { dataFrame, type Channel } from './protocol.ts';
import { withSeq } from './sequencer.ts';

export interface Entry {
  ref: SymbolRef;
  clients: Set<Client>;
  /** The last value, serialised without `seq` (a refresh that serialises the same is no change). */
  raw: string;
  /** The last update's number (sequencer.ts); 0 before the first. */
  seq: number;
  /** The last value pushed, serialised with its `seq`: the element every subscriber gets. */
  last: string;
}

export class Subscriptions {
  readonly #entries: Record<Channel, Map<string, Entry>> = { quotes: new Map(), depth: new Map() };
  /** Whether elements carry `seq` (stream.sequence). */
  readonly #numbered: boolean;

  constructor(numbered = true) {
    this.#numbered = numbered;
  }

  get(channel: Channel, symbol: string): Entry | undefined {
    return this.#entries[channel].get(symbol);
  }

  /** Every entry of a channel (a tick filters the live ones). */
  entries(channel: Channel): IterableIterator<Entry> {
    return this.#entries[channel].values();
  }

  symbols(channel: Channel): string[] {
    return [...this.#entries[channel].keys()];
  }

  get empty(): boolean {
    return this.#entries.quotes.size === 0 && this.#entries.depth.size === 0;
  }

  /** `client` subscribes to `ref`; a new entry starts from `json` (the snapshot) numbered `seq`. */
  add(channel: Channel, ref: SymbolRef, client: Client, json: string, seq: number): Entry {
    let entry = this.#entries[channel].get(ref.symbol);
    if (entry === undefined) {
      entry = { ref, clients: new Set(), raw: json, seq, last: this.#numbered ? withSeq(json, seq) : json };
      this.#entries[channel].set(ref.symbol, entry);
    }
    entry.clients.add(client);
    return entry;
  }

  /** `client` leaves `symbol`; the entry goes with its last subscriber (true then). */
  remove(channel: Channel, symbol: string, client: Client): boolean {
    const entry = this.#entries[channel].get(symbol);
    if (entry === undefined) return false;
    entry.clients.delete(client);
    if (entry.clients.size > 0) return false;
    this.#entries[channel].delete(symbol);
    return true;
  }

  /** The last seq of each of `symbols` held here (the heartbeat's `last_seq`). */
  lastSeq(channel: Channel, symbols: Iterable<string>): Record<string, number> {
    const out: Record<string, number> = {};
    for (const symbol of symbols) {
      const entry = this.#entries[channel].get(symbol);
      if (entry !== undefined) out[symbol] = entry.seq;
    }
    return out;
  }
}

/** Changed entries to their subscribers: clients with the same changed subset share one frame. */
export function fanout(outbox: Outbox, channel: Channel, changed: Entry[]): void {
  if (changed.length === 0) return;
  const perClient = new Map<Client, Entry[]>();
  for (const entry of changed) {
    for (const client of entry.clients) {
      const list = perClient.get(client);
      if (list === undefined) perClient.set(client, [entry]);
      else list.push(entry);
    }
  }
  // Usually every client shares the one frame of all changes.
  const frames = new Map<string, Buffer>();
  for (const [client, all] of perClient) {
    let list = all;
    const resuming = client.resuming?.[channel];
    if (resuming !== undefined && resuming.size > 0) {
      // A symbol being resumed waits for its replay (hub.ts sends what comes after it).
      list = all.filter((e) => {
        const held = resuming.get(e.ref.symbol);
        if (held === undefined) return true;
        held.push([e.seq, e.last]);
        return false;
      });
      if (list.length === 0) continue;
    }
    const key = list.length === changed.length ? '*' : list.map((e) => e.ref.symbol).join(',');
    let frame = frames.get(key);
    if (frame === undefined) {
      frame = Buffer.from(dataFrame(channel, list.map((e) => e.last)));
      frames.set(key, frame);
    }
    outbox.deliver(client, channel, frame, () => list.map((e) => [e.ref.symbol, e.last]));
  }
}
