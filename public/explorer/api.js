// Calls to the service's /v1 API: the key travels only in the X-API-Key header (never a URL),
// 429s wait retry_after_ms and retry, every other failure becomes an ApiError with words for it.

const KEY_STORAGE = 'mdqs.explorer.apiKey';

/** The key lives in sessionStorage only: gone when the tab closes, never in localStorage or a URL. */
export const keyStore = {
  get: () => sessionStorage.getItem(KEY_STORAGE) ?? '',
  set: (key) => sessionStorage.setItem(KEY_STORAGE, key),
  clear: () => sessionStorage.removeItem(KEY_STORAGE),
};

/**
 * Which ways in the server offers without typing (GET /explorer/access.json): the public demo key
 * while the keys file flags it `demo`, and the free tier's plan for calls without a key.
 */
let access = { demo_key: null, free_tier: null };

export async function loadAccess() {
  try {
    const response = await fetch('/explorer/access.json', { cache: 'no-store', credentials: 'omit' });
    const body = response.ok ? await response.json() : {};
    access = {
      demo_key: typeof body.demo_key === 'string' && body.demo_key !== '' ? body.demo_key : null,
      free_tier: body.free_tier && typeof body.free_tier === 'object' ? body.free_tier : null,
    };
  } catch {
    access = { demo_key: null, free_tier: null };
  }
  return access;
}

export const serverAccess = () => access;

/** The key the calls carry: the user's own, else the public demo key, else none ('' ). */
export const currentKey = () => keyStore.get() || access.demo_key || '';

/** 'own' (entered in this tab), 'demo' (the server's public demo key), 'free' (no key, free tier) or 'none'. */
export function keySource() {
  if (keyStore.get()) return 'own';
  if (access.demo_key) return 'demo';
  if (access.free_tier) return 'free';
  return 'none';
}

export class ApiError extends Error {
  constructor(status, body, path) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.body = body ?? {};
    this.reason = this.body.error ?? '';
    this.path = path;
  }
}

const listeners = { response: [], notice: [] };

/** Subscribe to every response ({path, status, reason, headers}) or to transient notices. */
export function on(event, listener) {
  listeners[event].push(listener);
}

function emit(event, value) {
  for (const listener of listeners[event]) listener(value);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * GET (or POST with a JSON body) a /v1 path; resolves with {data, headers}. A 429 is retried after
 * the server's retry_after_ms (at most `maxRetries` times) and announced as a notice meanwhile.
 */
export async function api(path, { body, maxRetries = 5 } = {}) {
  const key = currentKey();
  // No key and no free tier: nothing to ask. No key with the free tier: the call goes without one.
  if (key === '' && access.free_tier === null) throw new ApiError(401, { error: 'MISSING_API_KEY', message: 'no API key entered' }, path);
  const headers = key === '' ? {} : { 'X-API-Key': key };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  for (let attempt = 0; ; attempt += 1) {
    let response;
    try {
      response = await fetch(path, {
        method: body === undefined ? 'GET' : 'POST',
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
        credentials: 'omit',
        referrerPolicy: 'no-referrer',
      });
    } catch (error) {
      throw new ApiError(0, { error: 'NETWORK', message: `cannot reach the service (${error.message})` }, path);
    }
    const payload = await response.json().catch(() => undefined);
    emit('response', { path, status: response.status, reason: payload?.error ?? '', headers: response.headers, key });
    if (response.ok) return { data: payload?.data, headers: response.headers };
    if (response.status === 429 && attempt < maxRetries) {
      const seconds = Number(response.headers.get('retry-after') ?? '1');
      const waitMs = Math.max(250, payload?.retry_after_ms ?? seconds * 1000);
      emit('notice', { kind: 'rate', text: `Too many requests: waiting ${(waitMs / 1000).toFixed(1)} s as the server asks, then retrying.` });
      await sleep(waitMs);
      emit('notice', { kind: 'rate', text: '' });
      continue;
    }
    throw new ApiError(response.status, payload, path);
  }
}

const list = (items) => (Array.isArray(items) ? items.join(', ') : '');

/** "503 UPSTREAM_UNAVAILABLE · request 1f2e…": for a tooltip and a support ticket, not for the sentence. */
export function errorTag(error) {
  if (!(error instanceof ApiError)) return '';
  const tag = error.reason ? `${error.status} ${error.reason}` : `${error.status}`;
  return error.body.request_id ? `${tag} · request ${error.body.request_id}` : tag;
}

/** What a vendor-side failure means for the user, by reason. */
function vendorWords(reason) {
  if (reason === 'UPSTREAM_TIMEOUT') return 'vendor did not answer in time, try again';
  if (reason === 'SHUTTING_DOWN') return 'service restarting, try again';
  if (reason === 'INTERNAL_ERROR') return 'service error, try again';
  return 'vendor unavailable, try again';
}

/**
 * An error in the words a trader uses, led by the symbol it concerns when there is one
 * ("600000.XX: unknown symbol", "600519.SH: vendor unavailable, try again"). Status codes, reasons
 * and header names stay out of the sentence: errorTag() has them for the tooltip.
 */
export function describeError(error, { symbol } = {}) {
  if (!(error instanceof ApiError)) return `Unexpected error: ${error?.message ?? error}`;
  const { status, body, reason } = error;
  const details = body.details ?? {};
  const about = (text) => (symbol ? `${symbol}: ${text}` : text.charAt(0).toUpperCase() + text.slice(1));
  if (status === 0) return `The service cannot be reached (${body.message}); check the connection and try again.`;
  if (status === 401) {
    return reason === 'INVALID_API_KEY'
      ? 'Key rejected: this API key is not valid. Enter a valid key above.'
      : 'An API key is needed: enter your key above (it is kept in this tab only).';
  }
  if (status === 403) {
    const parts = [];
    if (details.missing_markets?.length) {
      const symbols = details.symbols?.length ? ` (${list(details.symbols)})` : '';
      parts.push(`the ${list(details.missing_markets)} market${details.missing_markets.length > 1 ? 's' : ''}${symbols}`);
    }
    if (details.missing_features?.length) parts.push(`${list(details.missing_features).replaceAll('_', ' ')} data`);
    const plan = details.plan ? `Your plan (${details.plan})` : 'Your plan';
    return parts.length > 0 ? `${plan} does not include ${parts.join(' or ')}.` : `${plan} does not allow this: ${body.message}.`;
  }
  // Depth of an index (docs/instruments.md): it has no order book.
  if (reason === 'SYMBOL_NOT_FOUND' && details.type === 'index') return about('an index has no order book');
  if (reason === 'SYMBOL_NOT_FOUND' || reason === 'INVALID_SYMBOL') {
    const named = symbol ?? details.symbol ?? details.symbols?.[0];
    const text = `${named ? `${named}: ` : ''}unknown symbol`;
    return reason === 'INVALID_SYMBOL' ? `${text}. Codes look like 600519.SH, 00700.HK or AAPL.US.` : text;
  }
  if (reason === 'REQUEST_TOO_LARGE') return about('too much history for one request; choose a longer period or a shorter range');
  if (status === 404) return about(`not found (${body.message})`);
  if (status === 400) return about(`request refused: ${body.message}`);
  if (status === 429) return 'Too many requests: still rate limited after several waits. Try again in a minute.';
  if (status >= 500) return about(vendorWords(reason));
  return about(`request failed: ${body.message ?? `HTTP ${status}`}`);
}
