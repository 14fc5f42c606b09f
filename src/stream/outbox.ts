// Delivery with back-pressure: a frame goes out while the client's send buffer (ws
// bufferedAmount) is under half the bound; past that the client is "behind" and its updates are
// conflated (latest JSON per symbol). After each tick a client that drained gets one frame per
// channel of what it missed; one still behind after slowCloseMs, or whose queued bytes plus
// held-back values pass the bound, is closed with 1013 and a reason: nothing grows without limit.
import type { FastifyBaseLogger } from 'fastify';
import type WebSocket from 'ws';
import type { KeyEntry } from '../access/keys.ts';
import type { StreamMetrics } from './metrics.ts';
import { CHANNELS, dataFrame, type Channel } from './protocol.ts';

/** A slow client closed with 1013 that still does not read is cut off after this (real time). */
const TERMINATE_AFTER_MS = 10_000;
export const TEXT = { binary: false } as const;

export interface Client {
  readonly id: number;
  /** The key's current record: replaced when a keys reload changes its plan (hub.applyKeys). */
  entry: KeyEntry;
  /** Whose caps it counts against: the key's id, or `anon:<address>` for the free tier. */
  owner: string;
  readonly socket: WebSocket;
  readonly route: string;
  readonly subs: Record<Channel, Set<string>>;
  /** Conflated updates held back while the client is behind: symbol → latest JSON. */
  readonly pending: Record<Channel, Map<string, string>>;
  slowSince: number | undefined;
  awaitingPong: boolean;
  closed: boolean;
  /** Closes the connection when the key expires (hub.ts). */
  expiry?: NodeJS.Timeout;
  /** Subscriptions reserved for a subscribe whose snapshot is still being read (fleet heartbeat). */
  reserved?: number;
  /**
   * Symbols being resumed (a subscribe with `since`): their live updates are held here, [seq,
   * element], until the replay is sent, then those after it follow (hub.ts).
   */
  resuming?: Record<Channel, Map<string, [number, string][]>>;
  /** Why the server closed it (mdqs_stream_closed_total{reason}); unset: the client went. */
  closeReason?: string;
}

export interface OutboxOptions {
  sendBufferBytes: number;
  slowCloseMs: number;
  now: () => number;
  metrics: StreamMetrics;
  log: FastifyBaseLogger;
  /** Forget the client's subscriptions (before its socket is closed). */
  detach: (client: Client) => void;
}

function heldBytes(client: Client): number {
  let bytes = 0;
  for (const channel of CHANNELS) for (const json of client.pending[channel].values()) bytes += json.length;
  return bytes;
}

export class Outbox {
  readonly #options: OutboxOptions;
  readonly #behind = new Set<Client>();
  readonly #sent: Record<Channel, { inc(n?: number): void }>;
  readonly #conflated: Record<Channel, { inc(n?: number): void }>;

  constructor(options: OutboxOptions) {
    this.#options = options;
    const { messagesSent, conflations } = options.metrics;
    this.#sent = { quotes: messagesSent.labels('quotes'), depth: messagesSent.labels('depth') };
    this.#conflated = { quotes: conflations.labels('quotes'), depth: conflations.labels('depth') };
  }

  get behindCount(): number {
    return this.#behind.size;
  }

  forget(client: Client): void {
    this.#behind.delete(client);
  }

  /** Send `frame`, or hold back `values` ([symbol, json] pairs, built only when needed). */
  deliver(client: Client, channel: Channel, frame: Buffer, values: () => Array<[string, string]>): void {
    if (client.closed) return;
    if (this.#behind.has(client) || client.socket.bufferedAmount > this.#options.sendBufferBytes / 2) {
      const pending = client.pending[channel];
      const held = values();
      for (const [symbol, json] of held) pending.set(symbol, json);
      this.#conflated[channel].inc(held.length);
      if (!this.#behind.has(client)) {
        this.#behind.add(client);
        client.slowSince = this.#options.now();
      }
      return;
    }
    client.socket.send(frame, TEXT);
    this.#sent[channel].inc();
  }

  /** After each tick: flush clients that caught up, close those behind too long or past the bound. */
  service(now: number): void {
    const { sendBufferBytes, slowCloseMs } = this.#options;
    for (const client of this.#behind) {
      const buffered = client.socket.bufferedAmount;
      const since = client.slowSince ?? now;
      // The bound covers what the socket has queued plus the values held back for it.
      if (buffered + heldBytes(client) > sendBufferBytes) {
        this.#closeSlow(client, 'send buffer past its bound');
      } else if (buffered <= sendBufferBytes / 2) {
        this.#behind.delete(client);
        client.slowSince = undefined;
        for (const channel of CHANNELS) {
          const pending = client.pending[channel];
          if (pending.size === 0) continue;
          const frame = dataFrame(channel, [...pending.values()]);
          pending.clear();
          client.socket.send(frame, TEXT);
          this.#sent[channel].inc();
        }
      } else if (now - since >= slowCloseMs) {
        this.#closeSlow(client, `behind for ${Math.round((now - since) / 1000)} s`);
      }
    }
  }

  #closeSlow(client: Client, why: string): void {
    this.#options.metrics.slowClientCloses.inc();
    this.#options.log.info({ key_id: client.entry.id, why }, 'closing a slow stream client');
    const socket = client.socket;
    client.closeReason = 'slow_consumer';
    this.#options.detach(client);
    this.#behind.delete(client);
    socket.close(1013, `slow consumer: ${why}; reconnect and read faster`.slice(0, 120));
    setTimeout(() => socket.terminate(), TERMINATE_AFTER_MS).unref();
  }
}
