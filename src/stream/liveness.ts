// Telling a live connection from a dead one, both ways: the server pings every pingIntervalMs and
// drops a connection that did not answer the previous ping (so within two intervals); and it sends
// every heartbeatMs an application-level `{"op":"heartbeat","time","last_seq"}`, so a client can
// tell a quiet market from a dead socket (and, from last_seq, a missed update) without reading
// ping frames. Timers run while there are clients, never in manual mode.
import type { Client } from './outbox.ts';
import { heartbeatFrame } from './protocol.ts';
import type { Subscriptions } from './subscriptions.ts';

export interface LivenessOptions {
  clients: ReadonlySet<Client>;
  subscriptions: Subscriptions;
  now: () => number;
  pingIntervalMs: number;
  heartbeatMs: number;
  send: (client: Client, text: string) => void;
}

export class Liveness {
  readonly #o: LivenessOptions;
  #pinger: NodeJS.Timeout | undefined;
  #beat: NodeJS.Timeout | undefined;

  constructor(options: LivenessOptions) {
    this.#o = options;
  }

  /** Starts the timers unless they run. */
  start(): void {
    if (this.#pinger !== undefined) return;
    this.#pinger = setInterval(() => this.ping(), this.#o.pingIntervalMs);
    this.#pinger.unref();
    this.#beat = setInterval(() => this.beat(), this.#o.heartbeatMs);
    this.#beat.unref();
  }

  stop(): void {
    if (this.#pinger !== undefined) clearInterval(this.#pinger);
    if (this.#beat !== undefined) clearInterval(this.#beat);
    this.#pinger = undefined;
    this.#beat = undefined;
  }

  /** Ping every client; one that has not answered the previous ping is gone. */
  ping(): void {
    for (const client of this.#o.clients) {
      if (client.awaitingPong) {
        client.closeReason = 'missed_pong';
        client.socket.terminate();
        continue;
      }
      client.awaitingPong = true;
      client.socket.ping();
    }
  }

  /** Every client's heartbeat: the time, and the last seq of each symbol it subscribes to. */
  beat(): void {
    const time = this.#o.now();
    const { subscriptions } = this.#o;
    for (const client of this.#o.clients) {
      const lastSeq = { quotes: subscriptions.lastSeq('quotes', client.subs.quotes), depth: subscriptions.lastSeq('depth', client.subs.depth) };
      this.#o.send(client, heartbeatFrame(time, lastSeq));
    }
  }
}
