// TickFlow's push feed: the vendor's `/v1/ws/stream?api_key=` WebSocket, spoken as its official
// client speaks it (tickflow-org/tickflow `tickflow/resources/stream.py`): the key in the query,
// `{"op":"subscribe"|"unsubscribe","channel":"quotes"|"depth","symbols":[…]}` out, and
// `{"op":"quotes","data":[Quote]}`, `{"op":"depth","data":[MarketDepth]}`, `subscribed` and
// `error` in. Pushed elements have the REST shapes, so they go through the same parsers (parse.ts):
// CN volume in shares, the vendor's own `timestamp` kept. Any other op is ignored, as the official
// client ignores it.
//
// One connection per adapter and process. It re-subscribes everything on every (re)connect, and
// reconnects after a loss with back-off (reconnectMs doubling to 30 s; a refused handshake, 401 or
// 403, waits the longest). It pings every 20 s and drops a connection that did not answer the
// previous ping (the official client's 20 s / 10 s).
import WebSocket from 'ws';
import type { SymbolRef } from '../../src/domain.ts';
import type { AdapterDeps, PushChannel, PushFeed, PushListener } from '../types.ts';
import { payloadReader, rowCheck } from '../common/validate.ts';
import { ADAPTER_ID } from './errors.ts';
import { parseDepthBatch, parseQuotes, type TickflowUnits } from './parse.ts';

export interface TickflowPushOptions {
  baseUrl: string;
  apiKey?: string;
  units: TickflowUnits;
  /** First wait before a reconnect, ms (doubles to MAX_RECONNECT_MS while the feed stays down). */
  reconnectMs: number;
  deps: AdapterDeps;
}

const MAX_RECONNECT_MS = 30_000;
const PING_MS = 20_000;
/** Symbols per subscribe message (the vendor's message limit is not published). */
const CHUNK = 200;

/** The official client's `_build_ws_url`: http(s) → ws(s), `/v1/ws/stream?api_key=`. */
export function tickflowStreamUrl(baseUrl: string, apiKey = ''): string {
  const url = new URL('/v1/ws/stream', baseUrl.replace(/\/+$/, '/'));
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('api_key', apiKey);
  return url.toString();
}

export class TickflowPush implements PushFeed {
  readonly #o: TickflowPushOptions;
  readonly #listener: PushListener;
  readonly #subs: Record<PushChannel, Map<string, SymbolRef>> = { quotes: new Map(), depth: new Map() };
  readonly #r = payloadReader(ADAPTER_ID);
  #ws: WebSocket | undefined;
  #connected = false;
  #started = false;
  #closed = false;
  #wait: number;
  #retry: NodeJS.Timeout | undefined;
  #ping: NodeJS.Timeout | undefined;

  constructor(options: TickflowPushOptions, listener: PushListener) {
    this.#o = options;
    this.#listener = listener;
    this.#wait = options.reconnectMs;
  }

  get connected(): boolean {
    return this.#connected;
  }

  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    this.#open();
  }

  subscribed(channel: PushChannel): number {
    return this.#subs[channel].size;
  }

  subscribe(channel: PushChannel, refs: readonly SymbolRef[]): void {
    const added = refs.filter((ref) => !this.#subs[channel].has(ref.symbol));
    for (const ref of added) this.#subs[channel].set(ref.symbol, ref);
    if (this.#connected) this.#send('subscribe', channel, added.map((r) => r.symbol));
  }

  unsubscribe(channel: PushChannel, symbols: readonly string[]): void {
    const gone = symbols.filter((s) => this.#subs[channel].delete(s));
    if (this.#connected) this.#send('unsubscribe', channel, gone);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#retry !== undefined) clearTimeout(this.#retry);
    if (this.#ping !== undefined) clearInterval(this.#ping);
    const ws = this.#ws;
    this.#ws = undefined;
    if (ws === undefined || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => { ws.terminate(); resolve(); }, 1000);
      ws.once('close', () => { clearTimeout(timer); resolve(); });
      if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else ws.close(1000);
    });
  }

  #open(): void {
    if (this.#closed) return;
    const ws = new WebSocket(tickflowStreamUrl(this.#o.baseUrl, this.#o.apiKey), {
      perMessageDeflate: true,
      maxPayload: 16 * 1024 * 1024,
      handshakeTimeout: 10_000,
      headers: { 'user-agent': 'mdqs-gateway' },
    });
    this.#ws = ws;
    let refusedWith: number | undefined;
    ws.on('unexpected-response', (_request, response) => {
      refusedWith = response.statusCode;
      response.resume();
      ws.terminate();
    });
    ws.on('open', () => {
      this.#wait = this.#o.reconnectMs;
      this.#connected = true;
      let awaitingPong = false;
      ws.on('pong', () => { awaitingPong = false; });
      this.#ping = setInterval(() => {
        if (awaitingPong) return ws.terminate();
        awaitingPong = true;
        ws.ping();
      }, PING_MS);
      this.#ping.unref();
      for (const channel of ['quotes', 'depth'] as const) this.#send('subscribe', channel, [...this.#subs[channel].keys()]);
      this.#listener.state(true);
    });
    ws.on('message', (data: WebSocket.RawData) => this.#message(Array.isArray(data) ? Buffer.concat(data).toString('utf8') : data.toString()));
    ws.on('error', () => undefined);
    ws.on('close', (code: number) => {
      if (this.#ping !== undefined) clearInterval(this.#ping);
      this.#ping = undefined;
      const was = this.#connected;
      this.#connected = false;
      if (this.#ws === ws) this.#ws = undefined;
      if (this.#closed) return;
      const reason = refusedWith !== undefined ? `handshake refused (HTTP ${refusedWith})` : was ? `connection lost (close ${code})` : 'connection failed';
      // A refused key waits the longest; others back off from reconnectMs.
      const wait = refusedWith === 401 || refusedWith === 403 ? MAX_RECONNECT_MS : this.#wait;
      this.#wait = Math.min(MAX_RECONNECT_MS, this.#wait * 2);
      this.#listener.state(false, reason);
      this.#retry = setTimeout(() => { this.#retry = undefined; this.#open(); }, wait);
      this.#retry.unref();
    });
  }

  #send(op: 'subscribe' | 'unsubscribe', channel: PushChannel, symbols: string[]): void {
    const ws = this.#ws;
    if (ws === undefined || ws.readyState !== WebSocket.OPEN) return;
    for (let i = 0; i < symbols.length; i += CHUNK) ws.send(JSON.stringify({ op, channel, symbols: symbols.slice(i, i + CHUNK) }));
  }

  #message(text: string): void {
    let message: Record<string, unknown>;
    try {
      message = this.#r.record(JSON.parse(text), 'message');
    } catch {
      this.#listener.problem('a pushed message is not a JSON object');
      return;
    }
    const { op } = message;
    try {
      if (op === 'quotes') {
        this.#listener.quotes(parseQuotes(message.data, this.#subs.quotes, this.#o.units, this.#r, this.#check('quotes')()));
      } else if (op === 'depth') {
        // Pushed as a list; the batch parser reads the REST batch's map keyed by symbol.
        const keyed: Record<string, unknown> = {};
        for (const [i, item] of this.#r.array(message.data, 'data').entries()) {
          keyed[this.#r.string(this.#r.record(item, `data[${i}]`).symbol, `data[${i}].symbol`)] = item;
        }
        this.#listener.depth(parseDepthBatch(keyed, this.#subs.depth, this.#o.units, this.#r, this.#check('depth')));
      } else if (op === 'error') {
        this.#listener.problem(`the vendor said: ${String(message.message ?? 'error').slice(0, 200)}`);
      }
    } catch {
      this.#listener.problem(`a pushed ${String(op)} message has the wrong shape`);
    }
  }

  #check(resource: 'quotes' | 'depth') {
    return (symbol?: string) => rowCheck(ADAPTER_ID, this.#o.deps.onInvalidRows, resource, symbol);
  }
}
