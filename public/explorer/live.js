// Live quotes and depth by polling /v1/quotes and /v1/depth.
//
// Why not /v1/ws/stream: the stream authenticates at the handshake with the key in its URL or an
// X-API-Key header. A browser cannot set headers on a WebSocket, and a key in a URL ends up in
// logs and history, which this page never allows. Polling sends the key in a header like every
// other call, and the response cache makes a 2 s poll cheap.
import { ApiError, api } from './api.js';

export const POLL_MS = 2000;
/** Outside sessions quotes do not move; look now and then for the open. */
export const IDLE_POLL_MS = 30_000;
const MOVING = new Set(['pre_market', 'regular', 'after_hours']);

/**
 * Poll one symbol until stopped. `onQuote(quote)`, `onDepth(depth)`; `onError(kind, error)` per
 * failure. A 401/403 stops that kind (asking again cannot succeed); anything else is retried.
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
    if (error.status === 401 || error.status === 403) active[kind] = false;
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
