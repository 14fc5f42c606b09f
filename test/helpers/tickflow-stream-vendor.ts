// A TickFlow vendor with its push feed, on a local server: `/v1/quotes` (GET `?symbols=`, POST
// `{"symbols":[…]}`) and the WebSocket `/v1/ws/stream?api_key=`, spoken as TickFlow's official
// client expects it (tickflow-org/tickflow `tickflow/resources/stream.py`: the key in the query,
// a refused key answered at the handshake with HTTP 401; `{"op":"subscribe"|"unsubscribe",
// "channel","symbols"}` in; `{"op":"subscribed","channel","symbols","total"}` and
// `{"op":"quotes","data":[Quote]}` out, the snapshot of the new symbols right after a subscribe).
//
// Quotes have the shape of TickFlow's documented push example (docs.tickflow.org, WebSocket page:
// the `quotes` example for 600000.SH at 2026-04-21 15:00:02 +08:00, kept in
// mocks/fixtures/tickflow/replay-docs-quotes-600000.json): 600000.SH starts from that example's
// values; the other symbols copy its shape with their own name and price. `move()` changes every
// quote (price, volume, amount, and `timestamp` from the vendor's clock) and pushes the changed
// ones to the sockets subscribed to them. Every HTTP request, socket and subscribe is recorded;
// `kill()` terminates the sockets and `refuse` answers new handshakes 503.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

const EXAMPLE = (JSON.parse(readFileSync(new URL('../../mocks/fixtures/tickflow/replay-docs-quotes-600000.json', import.meta.url), 'utf8')) as { data: VendorQuote[] }).data[0];

export interface VendorQuote {
  symbol: string;
  region: string;
  last_price: number;
  prev_close: number;
  open: number;
  high: number;
  low: number;
  volume: number;
  amount: number;
  timestamp: number;
  ext: { type: string; name: string; change_pct: number; change_amount: number; amplitude: number; turnover_rate: number };
}

const OTHERS: Record<string, { name: string; scale: number }> = {
  '000001.SZ': { name: '平安银行', scale: 1.21 },
  '600519.SH': { name: '贵州茅台', scale: 150.3 },
  '600036.SH': { name: '招商银行', scale: 4.37 },
};

export interface SubscribeRecord {
  socket: number;
  op: 'subscribe' | 'unsubscribe';
  channel: string;
  symbols: string[];
}

export interface StreamVendor {
  base: string;
  apiKey: string;
  quotes: Map<string, VendorQuote>;
  /** HTTP requests for quotes (polling and snapshots), by path and symbols. */
  quoteRequests: { at: number; symbols: string[] }[];
  /** Subscribe and unsubscribe messages received, by socket number. */
  subscribes: SubscribeRecord[];
  /** Sockets accepted so far. */
  accepted: number;
  /** Open sockets. */
  readonly open: number;
  /** Handshakes refused while true (HTTP 503). */
  refuse: boolean;
  /** Every quote changes; subscribers of each get it pushed. */
  move(): void;
  /** Symbols subscribed on any open socket, with how many sockets hold each. */
  holders(): Map<string, number>;
  /** Terminates every open socket (the vendor's side of a lost feed). */
  kill(): void;
  close(): Promise<void>;
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

function quoteOf(symbol: string): VendorQuote {
  if (symbol === EXAMPLE.symbol) return structuredClone(EXAMPLE);
  const other = OTHERS[symbol];
  const q = structuredClone(EXAMPLE);
  q.symbol = symbol;
  q.ext.name = other.name;
  for (const k of ['last_price', 'prev_close', 'open', 'high', 'low'] as const) q[k] = round(q[k] * other.scale, 2);
  q.amount = Math.round(q.amount * other.scale);
  return q;
}

export async function startStreamVendor(now: () => number, apiKey = 'vendor-secret'): Promise<StreamVendor> {
  const quotes = new Map(Object.keys({ [EXAMPLE.symbol]: 1, ...OTHERS }).map((s) => [s, quoteOf(s)]));
  const subs = new Map<WebSocket, { id: number; quotes: Set<string> }>();
  let server: Server;
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: true });
  const vendor: StreamVendor = {
    base: '', apiKey, quotes, quoteRequests: [], subscribes: [], accepted: 0, refuse: false,
    get open() { return subs.size; },
    move() {
      const changed: VendorQuote[] = [];
      for (const q of quotes.values()) {
        q.last_price = round(q.last_price + 0.01, 2);
        q.high = Math.max(q.high, q.last_price);
        q.volume += 100;
        q.amount = Math.round(q.amount + 100 * 100 * q.last_price);
        q.timestamp = now();
        q.ext.change_amount = round(q.last_price - q.prev_close, 2);
        q.ext.change_pct = round((q.last_price - q.prev_close) / q.prev_close, 6);
        changed.push(q);
      }
      for (const [ws, s] of subs) {
        const data = changed.filter((q) => s.quotes.has(q.symbol));
        if (data.length > 0) ws.send(JSON.stringify({ op: 'quotes', data }));
      }
    },
    holders() {
      const count = new Map<string, number>();
      for (const s of subs.values()) for (const symbol of s.quotes) count.set(symbol, (count.get(symbol) ?? 0) + 1);
      return count;
    },
    kill() {
      for (const ws of subs.keys()) ws.terminate();
    },
    close: () => new Promise<void>((resolve) => {
      vendor.kill();
      wss.close();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };

  const answer = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://vendor.test');
    if (url.pathname !== '/v1/quotes') return answer(res, 404, { code: 'NOT_FOUND', message: 'not found' });
    if (req.headers['x-api-key'] !== apiKey) return answer(res, 401, { code: 'UNAUTHORIZED', message: 'invalid api key' });
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString(); });
    req.on('end', () => {
      const symbols = req.method === 'POST' ? (JSON.parse(body) as { symbols: string[] }).symbols : (url.searchParams.get('symbols') ?? '').split(',');
      vendor.quoteRequests.push({ at: Date.now(), symbols });
      answer(res, 200, { data: symbols.filter((s) => quotes.has(s)).map((s) => quotes.get(s)) });
    });
  });
  server.on('upgrade', (req: IncomingMessage, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://vendor.test');
    const refuse = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n${JSON.stringify({ code: text.toUpperCase().replace(/ /g, '_'), message: text })}`);
    };
    if (url.pathname !== '/v1/ws/stream') return refuse(404, 'Not Found');
    if (url.searchParams.get('api_key') !== apiKey) return refuse(401, 'Unauthorized');
    if (vendor.refuse) return refuse(503, 'Service Unavailable');
    wss.handleUpgrade(req, socket, head, (ws) => {
      vendor.accepted += 1;
      const state = { id: vendor.accepted, quotes: new Set<string>() };
      subs.set(ws, state);
      ws.on('close', () => subs.delete(ws));
      ws.on('message', (raw) => {
        const message = JSON.parse(raw.toString()) as { op: 'subscribe' | 'unsubscribe'; channel: string; symbols: string[] };
        vendor.subscribes.push({ socket: state.id, op: message.op, channel: message.channel, symbols: message.symbols });
        if (message.channel !== 'quotes') return;
        if (message.op === 'unsubscribe') {
          for (const s of message.symbols) state.quotes.delete(s);
          return;
        }
        const known = message.symbols.filter((s) => quotes.has(s));
        for (const s of known) state.quotes.add(s);
        ws.send(JSON.stringify({ op: 'subscribed', channel: 'quotes', symbols: known, total: state.quotes.size }));
        if (known.length > 0) ws.send(JSON.stringify({ op: 'quotes', data: known.map((s) => quotes.get(s)) }));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  vendor.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return vendor;
}
