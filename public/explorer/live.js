// Live quotes and depth: pushed over /v1/ws/stream when it answers, else by polling /v1/quotes and
// /v1/depth.
//
// A browser cannot set an X-API-Key header on a WebSocket, and a key in the URL would end up in
// logs and history, which this page never allows: the key goes as the WebSocket subprotocol
// `mdqs.key.<key>` (a request header), next to `mdqs.v1`, which the server selects. When the
// stream cannot be used (refused, closed, an error message), the page polls instead: the key then
// goes in X-API-Key like every other call, and the response cache makes a 2 s poll cheap.
import { ApiError, api, currentKey } from './api.js';

export const POLL_MS = 2000;
/** Outside sessions quotes do not move; look now and then for the open. */
export const IDLE_POLL_MS = 30_000;
const MOVING = new Set(['pre_market', 'regular', 'after_hours']);

/**
 * Poll one symbol until stopped. `onQuote(quote)`, `onDepth(depth)`; `onError(kind, error)` per
 * failure. A 401/403 stops that kind (asking again cannot succeed), and so does the depth of an
 * index (404 with details.type index: it has no order book); anything else is retried.
 */
export function startPolling(symbol, { onQuote, onDepth, onError }) {
  let stopped = false;
  let timer;
  const active = { quote: true, depth: true };

  async function once() {
    let session;
    const tasks = [];
    if (active.quote) {
      tasks.push(api(`/v1/quotes?symbols=${encodeURIComponent(symbol)}`).then(({ data }) => {
        const quote = (data ?? []).find((q) => q.symbol === symbol) ?? data?.[0];
        if (quote === undefined) throw new ApiError(404, { error: 'SYMBOL_NOT_FOUND', message: `no quote for ${symbol}` }, '/v1/quotes');
        session = quote.session;
        if (!stopped) onQuote(quote);
      }).catch((error) => fail('quote', error)));
    }
    if (active.depth) {
      tasks.push(api(`/v1/depth?symbol=${encodeURIComponent(symbol)}`).then(({ data }) => {
        if (!stopped) onDepth(data);
      }).catch((error) => fail('depth', error)));
    }
    await Promise.all(tasks);
    return session;
  }

  function fail(kind, error) {
    if (stopped) return;
    if (error.status === 401 || error.status === 403 || (kind === 'depth' && error.body?.details?.type === 'index')) active[kind] = false;
    onError(kind, error);
  }

  let running = false;
  async function loop() {
    if (running || stopped) return;
    running = true;
    clearTimeout(timer);
    const session = await once();
    running = false;
    if (stopped || (!active.quote && !active.depth)) return;
    const moving = session === undefined || MOVING.has(session);
    // A hidden tab keeps only a slow watch, so a forgotten tab does not spend the key's limit.
    timer = setTimeout(loop, moving && !document.hidden ? POLL_MS : IDLE_POLL_MS);
  }

  const onVisible = () => {
    if (!document.hidden) void loop();
  };
  document.addEventListener('visibilitychange', onVisible);

  void loop();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    },
  };
}

/**
 * Live updates for one symbol: the stream first, polling when it fails. `onTransport(name)` says
 * which one runs ('stream' or 'polling').
 */
export function startLive(symbol, callbacks) {
  let stopped = false;
  let poller;
  let socket;
  const fallBack = () => {
    if (stopped || poller !== undefined) return;
    socket?.close();
    callbacks.onTransport?.('polling');
    poller = startPolling(symbol, callbacks);
  };
  const key = currentKey();
  // A key that is not a plain token cannot be a subprotocol name: poll. The stream is opened
  // only once the API has accepted the key for this symbol (one quote over REST), so a wrong key
  // or a plan without the market is said in words by the polling path, not by a failed socket.
  if (typeof WebSocket === 'undefined' || !/^[A-Za-z0-9._~+-]+$/.test(key)) {
    fallBack();
  } else {
    api(`/v1/quotes?symbols=${encodeURIComponent(symbol)}`, { maxRetries: 0 }).then(({ data }) => {
      const quote = (data ?? []).find((q) => q.symbol === symbol);
      if (stopped) return;
      if (quote === undefined) fallBack();
      else {
        callbacks.onQuote(quote);
        openStream();
      }
    }, () => fallBack());
  }

  function openStream() {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    try {
      socket = new WebSocket(`${scheme}//${location.host}/v1/ws/stream`, ['mdqs.v1', `mdqs.key.${key}`]);
    } catch {
      fallBack();
    }
    if (socket !== undefined) {
      let subscribed = false;
      socket.addEventListener('open', () => {
        callbacks.onTransport?.('stream');
        socket.send(JSON.stringify({ op: 'subscribe', channel: 'quotes', symbols: [symbol] }));
        socket.send(JSON.stringify({ op: 'subscribe', channel: 'depth', symbols: [symbol] }));
      });
      socket.addEventListener('message', (event) => {
        if (stopped) return;
        let message;
        try {
          message = JSON.parse(event.data);
        } catch {
          return;
        }
        if (message.op === 'subscribed') subscribed = true;
        else if (message.op === 'quotes') {
          const quote = (message.data ?? []).find((q) => q.symbol === symbol);
          if (quote !== undefined) callbacks.onQuote(quote);
        } else if (message.op === 'depth') {
          const depth = (message.data ?? []).find((d) => d.symbol === symbol);
          if (depth !== undefined) callbacks.onDepth(depth);
        } else if (message.op === 'error' && message.error === 'SYMBOL_NOT_FOUND' && message.details?.channel === 'depth') {
          // An index has no order book: the depth subscription is refused, its quotes stream on.
          callbacks.onError('depth', new ApiError(404, { error: message.error, message: message.message, details: { ...message.details, type: 'index' } }, '/v1/ws/stream'));
        } else if (message.op === 'error') {
          // e.g. the plan lacks depth or the market: polling shows that error in words.
          fallBack();
        }
      });
      socket.addEventListener('close', () => {
        if (!stopped) fallBack();
      });
      socket.addEventListener('error', () => {
        if (!subscribed) fallBack();
      });
    }
  }
  return {
    stop() {
      stopped = true;
      socket?.close();
      poller?.stop();
    },
  };
}
