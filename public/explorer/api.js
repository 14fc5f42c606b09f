// Calls to the service's /v1 API: the key travels only in the X-API-Key header (never a URL),
// 429s wait retry_after_ms and retry, every other failure becomes an ApiError with words for it.

const KEY_STORAGE = 'mdqs.explorer.apiKey';

/** The key lives in sessionStorage only: gone when the tab closes, never in localStorage or a URL. */
export const keyStore = {
  get: () => sessionStorage.getItem(KEY_STORAGE) ?? '',
  set: (key) => sessionStorage.setItem(KEY_STORAGE, key),
  clear: () => sessionStorage.removeItem(KEY_STORAGE),
};

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

/** Subscribe to every response's headers ({path, status, headers}) or to transient notices. */
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
  const key = keyStore.get();
  if (key === '') throw new ApiError(401, { error: 'MISSING_API_KEY', message: 'no API key entered' }, path);
  for (let attempt = 0; ; attempt += 1) {
    let response;
    try {
      response = await fetch(path, {
        method: body === undefined ? 'GET' : 'POST',
        headers: body === undefined ? { 'X-API-Key': key } : { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
        credentials: 'omit',
        referrerPolicy: 'no-referrer',
      });
    } catch (error) {
      throw new ApiError(0, { error: 'NETWORK', message: `cannot reach the service (${error.message})` }, path);
    }
    const payload = await response.json().catch(() => undefined);
    emit('response', { path, status: response.status, headers: response.headers });
    if (response.ok) return { data: payload?.data, headers: response.headers };
    if (response.status === 429 && attempt < maxRetries) {
      const seconds = Number(response.headers.get('retry-after') ?? '1');
      const waitMs = Math.max(250, payload?.retry_after_ms ?? seconds * 1000);
      emit('notice', { kind: 'rate', text: `Rate limited (429 RATE_LIMITED): waiting ${(waitMs / 1000).toFixed(1)} s as the server asks, then retrying.` });
      await sleep(waitMs);
      emit('notice', { kind: 'rate', text: '' });
      continue;
    }
    throw new ApiError(response.status, payload, path);
  }
}

const list = (items) => (Array.isArray(items) ? items.join(', ') : '');

/** An error in words a person can act on. */
export function describeError(error) {
  if (!(error instanceof ApiError)) return `Unexpected error: ${error?.message ?? error}`;
  const { status, body, reason } = error;
  const tag = reason ? `${status} ${reason}` : `${status}`;
  const details = body.details ?? {};
  if (status === 0) return `The service cannot be reached: ${body.message}.`;
  if (status === 401) {
    return reason === 'INVALID_API_KEY'
      ? `This API key is not valid (${tag}). Enter a valid key above.`
      : `An API key is needed (${tag}). Enter your key above; it is kept in this tab only.`;
  }
  if (status === 403) {
    const parts = [];
    if (details.missing_markets?.length) {
      const symbols = details.symbols?.length ? ` (${list(details.symbols)})` : '';
      parts.push(`the ${list(details.missing_markets)} market${details.missing_markets.length > 1 ? 's' : ''}${symbols}`);
    }
    if (details.missing_features?.length) parts.push(`the ${list(details.missing_features)} feature${details.missing_features.length > 1 ? 's' : ''}`);
    const plan = details.plan ? `Your plan (${details.plan})` : 'Your plan';
    return parts.length > 0
      ? `${plan} does not include ${parts.join(' or ')} (${tag}).`
      : `${plan} does not allow this request (${tag}): ${body.message}.`;
  }
  if (status === 404) return `Not found (${tag}): ${body.message}.`;
  if (status === 400) return `The request was refused (${tag}): ${body.message}.`;
  if (status === 429) return `Still rate limited after several waits (${tag}). Try again in a minute.`;
  if (status >= 500) return `The upstream data source is failing (${tag}): ${body.message ?? 'no details'}. The explorer keeps retrying.`;
  return `Request failed (${tag}): ${body.message}.`;
}
