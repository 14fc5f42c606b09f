// TickFlow's push feed (adapters/tickflow/push.ts) against a local `ws` server speaking the
// vendor's side: the key in `?api_key=`, the subscribe messages the official client sends
// (tickflow-org/tickflow `tickflow/resources/stream.py`), pushes in the documented shapes (the
// `quotes` and `depth` examples of docs.tickflow.org's WebSocket page, kept in
// mocks/fixtures/tickflow/replay-docs-*-600000.json), ops the client does not know (ignored, as
// the official client ignores them), malformed pushes and the vendor's `error` op (reported, the
// feed stays up), a refused key (401), and a lost connection (reconnect, re-subscribe).
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { DEFAULT_UNITS } from '../../adapters/tickflow/parse.ts';
import { TickflowPush, tickflowStreamUrl } from '../../adapters/tickflow/push.ts';
import type { Depth, Quote } from '../../src/domain.ts';
import { parseSymbol } from '../../src/markets/symbols.ts';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../mocks/fixtures/tickflow/${name}`, import.meta.url), 'utf8')) as { data: unknown };
const QUOTE = (fixture('replay-docs-quotes-600000.json').data as unknown[])[0];
const DEPTH = fixture('replay-docs-depth-600000.json').data;
const ref = (symbol: string) => parseSymbol(symbol)!;

interface Vendor { base: string; server: Server; sockets: WebSocket[]; received: string[]; upgrades: URL[]; close(): Promise<void> }

async function vendor(apiKey = 'k'): Promise<Vendor> {
  const wss = new WebSocketServer({ noServer: true });
  const v: Vendor = { base: '', server: createServer(), sockets: [], received: [], upgrades: [], close: async () => undefined };
  v.server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://vendor.test');
    v.upgrades.push(url);
    if (url.searchParams.get('api_key') !== apiKey) {
      socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"code":"UNAUTHORIZED","message":"invalid api key"}');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      v.sockets.push(ws);
      ws.on('message', (data) => v.received.push(data.toString()));
    });
  });
  await new Promise<void>((resolve) => v.server.listen(0, '127.0.0.1', resolve));
  v.base = `http://127.0.0.1:${(v.server.address() as AddressInfo).port}`;
  v.close = () => new Promise((resolve) => {
    for (const ws of v.sockets) ws.terminate();
    wss.close();
    v.server.closeAllConnections();
    v.server.close(() => resolve());
  });
  return v;
}

function listener() {
  const events = { quotes: [] as Map<string, Quote>[], depth: [] as Map<string, Depth>[], states: [] as [boolean, string | undefined][], problems: [] as string[] };
  return {
    events,
    quotes: (items: Map<string, Quote>) => events.quotes.push(items),
    depth: (items: Map<string, Depth>) => events.depth.push(items),
    state: (connected: boolean, reason?: string) => events.states.push([connected, reason]),
    problem: (reason: string) => events.problems.push(reason),
  };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const open: { feed?: TickflowPush; vendor?: Vendor }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.feed?.close();
    await o.vendor?.close();
  }
});

describe('tickflowStreamUrl', () => {
  it('is the official client\'s URL: ws(s), /v1/ws/stream, the key in api_key', () => {
    expect(tickflowStreamUrl('https://api.tickflow.org', 'abc')).toBe('wss://api.tickflow.org/v1/ws/stream?api_key=abc');
    expect(tickflowStreamUrl('http://127.0.0.1:9000/', 'a b')).toBe('ws://127.0.0.1:9000/v1/ws/stream?api_key=a+b');
  });
});

describe('TickflowPush', () => {
  it('subscribes as the official client does, and parses the documented quotes and depth pushes into our shapes', async () => {
    const v = await vendor();
    const l = listener();
    const feed = new TickflowPush({ baseUrl: v.base, apiKey: 'k', units: DEFAULT_UNITS, reconnectMs: 100, deps: { now: Date.now } }, l);
    open.push({ feed, vendor: v });
    feed.subscribe('quotes', [ref('600000.SH')]);
    feed.start();
    await until(() => l.events.states.length === 1, 'connected');
    expect(l.events.states[0]).toEqual([true, undefined]);
    expect(feed.connected).toBe(true);
    await until(() => v.received.length === 1, 'the subscribe');
    expect(JSON.parse(v.received[0])).toEqual({ op: 'subscribe', channel: 'quotes', symbols: ['600000.SH'] });
    feed.subscribe('depth', [ref('600000.SH')]);
    await until(() => v.received.length === 2, 'the depth subscribe');
    expect(JSON.parse(v.received[1])).toEqual({ op: 'subscribe', channel: 'depth', symbols: ['600000.SH'] });

    const ws = v.sockets[0];
    // The server's own additions to the protocol are not the client's business.
    ws.send(JSON.stringify({ op: 'subscribed', channel: 'quotes', symbols: ['600000.SH'], total: 1 }));
    ws.send(JSON.stringify({ op: 'heartbeat', time: 1776754802000, last_seq: {} }));
    ws.send(JSON.stringify({ op: 'quotes', data: [QUOTE, { ...(QUOTE as object), symbol: '000001.SZ' }] }));
    ws.send(JSON.stringify({ op: 'depth', data: [DEPTH] }));
    await until(() => l.events.quotes.length === 1 && l.events.depth.length === 1, 'the pushes');
    // Only what was subscribed; CN volume in shares (lots × 100); the vendor's own timestamp.
    const quote = l.events.quotes[0].get('600000.SH')!;
    expect([...l.events.quotes[0].keys()]).toEqual(['600000.SH']);
    expect(quote).toMatchObject({ symbol: '600000.SH', region: 'CN', last_price: 9.72, prev_close: 9.78, volume: 42_658_500, amount: 422_430_500, timestamp: 1776754802000 });
    expect(quote.ext).toMatchObject({ type: 'cn_equity', name: '浦发银行', change_pct: -0.006135 });
    const depth = l.events.depth[0].get('600000.SH')!;
    expect(depth.timestamp).toBe(1776754802000);
    expect(depth.bid_prices).toEqual([9.72, 9.71, 9.7, 9.69, 9.68]);
    expect(depth.ask_volumes).toEqual([7400, 160_200, 114_800, 120_900, 110_900]);
    expect(l.events.problems).toEqual([]);

    feed.unsubscribe('quotes', ['600000.SH']);
    await until(() => v.received.length === 3, 'the unsubscribe');
    expect(JSON.parse(v.received[2])).toEqual({ op: 'unsubscribe', channel: 'quotes', symbols: ['600000.SH'] });
    expect(feed.subscribed('quotes')).toBe(0);
    expect(feed.subscribed('depth')).toBe(1);
  });

  it('reports malformed pushes and the vendor\'s error op, and stays connected', async () => {
    const v = await vendor();
    const l = listener();
    const feed = new TickflowPush({ baseUrl: v.base, apiKey: 'k', units: DEFAULT_UNITS, reconnectMs: 100, deps: { now: Date.now } }, l);
    open.push({ feed, vendor: v });
    feed.subscribe('quotes', [ref('600000.SH')]);
    feed.start();
    await until(() => v.sockets.length === 1, 'connected');
    const ws = v.sockets[0];
    ws.send('not json');
    ws.send(JSON.stringify({ op: 'quotes', data: { symbol: '600000.SH' } }));
    ws.send(JSON.stringify({ op: 'depth', data: [{ bid_prices: [] }] }));
    ws.send(JSON.stringify({ op: 'error', message: 'too many symbols' }));
    await until(() => l.events.problems.length === 4, 'four problems');
    expect(l.events.problems).toEqual([
      'a pushed message is not a JSON object',
      'a pushed quotes message has the wrong shape',
      'a pushed depth message has the wrong shape',
      'the vendor said: too many symbols',
    ]);
    expect(l.events.quotes).toEqual([]);
    expect(feed.connected).toBe(true);
  });

  it('a lost connection is reported, then reconnected with everything re-subscribed', async () => {
    const v = await vendor();
    const l = listener();
    const feed = new TickflowPush({ baseUrl: v.base, apiKey: 'k', units: DEFAULT_UNITS, reconnectMs: 100, deps: { now: Date.now } }, l);
    open.push({ feed, vendor: v });
    feed.subscribe('quotes', [ref('600000.SH'), ref('000001.SZ')]);
    feed.start();
    await until(() => v.received.length === 1, 'the subscribe');
    v.sockets[0].terminate();
    await until(() => l.events.states.length === 3, 'lost, then connected again');
    expect(l.events.states[1][0]).toBe(false);
    expect(l.events.states[1][1]).toMatch(/^connection lost/);
    expect(l.events.states[2]).toEqual([true, undefined]);
    await until(() => v.received.length === 2, 'the re-subscribe');
    expect(JSON.parse(v.received[1])).toEqual({ op: 'subscribe', channel: 'quotes', symbols: ['600000.SH', '000001.SZ'] });
  });

  it('a refused key is reported with its status and not retried at once', async () => {
    const v = await vendor('right');
    const l = listener();
    const feed = new TickflowPush({ baseUrl: v.base, apiKey: 'wrong', units: DEFAULT_UNITS, reconnectMs: 100, deps: { now: Date.now } }, l);
    open.push({ feed, vendor: v });
    feed.start();
    await until(() => l.events.states.length === 1, 'refused');
    expect(l.events.states[0]).toEqual([false, 'handshake refused (HTTP 401)']);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // reconnectMs is 100, but a refused key waits 30 s.
    expect(v.upgrades).toHaveLength(1);
    expect(feed.connected).toBe(false);
  });
});
