// What the key's plan allows, from GET /v1/me, in a line beside the key box. A service without
// /v1/me (404) shows nothing; the remaining calls follow each response's X-RateLimit-Remaining.
import { ApiError, api, currentKey } from './api.js';

const $ = (id) => document.getElementById(id);
let current = null;

const WINDOWS = { 1000: 'second', 60_000: 'minute', 3_600_000: 'hour', 86_400_000: 'day' };
const per = (ms) => WINDOWS[ms] ?? `${Math.round(ms / 1000)} s`;
const n = (value) => (typeof value === 'number' ? value.toLocaleString('en-US') : '?');

/** The visible line: plan, markets, symbol cap, calls left. */
export function planLine(me) {
  const parts = [];
  parts.push(me.anonymous ? `No key: anonymous plan ${me.plan}` : `Plan ${me.plan}`);
  if (Array.isArray(me.markets) && me.markets.length > 0) parts.push(`${me.markets.join(', ')} market${me.markets.length > 1 ? 's' : ''}`);
  if (typeof me.max_symbols === 'number') parts.push(`up to ${n(me.max_symbols)} symbols a call`);
  const limit = me.rate_limit;
  if (limit && typeof limit.limit === 'number') {
    parts.push(`${n(limit.remaining)} of ${n(limit.limit)} calls left this ${per(limit.window_ms)}${limit.shared ? ' (all servers)' : ''}`);
  }
  if (me.expires_at) parts.push(`expires ${String(me.expires_at).slice(0, 10)}`);
  return parts.join(' · ');
}

/** The tooltip: the rest of what the plan allows. */
export function planDetails(me) {
  const lines = [];
  if (Array.isArray(me.features)) lines.push(`Data: ${me.features.join(', ').replaceAll('_', ' ')}`);
  if (typeof me.max_bars === 'number') lines.push(`Up to ${n(me.max_bars)} bars a request`);
  if (me.stream) lines.push(`Live stream: ${n(me.stream.max_connections)} connections, ${n(me.stream.max_subscriptions)} subscriptions`);
  if (me.key_id) lines.push(`Key id: ${me.key_id}`);
  return lines.join('\n');
}

function render() {
  const node = $('key-plan');
  node.textContent = current === null ? '' : planLine(current);
  node.title = current === null ? '' : planDetails(current);
}

/**
 * Ask /v1/me. Resolves with 'ok' (shown), 'absent' (no such route yet: nothing shown),
 * 'rejected' (401), 'error', or 'stale' (another key came in meanwhile: its own call says).
 */
export async function loadMe() {
  const key = currentKey();
  try {
    const { data } = await api('/v1/me', { maxRetries: 1 });
    if (key !== currentKey()) return 'stale';
    current = data && typeof data === 'object' ? data : null;
    render();
    return current === null ? 'error' : 'ok';
  } catch (error) {
    if (key !== currentKey()) return 'stale';
    current = null;
    render();
    if (error instanceof ApiError && error.status === 404) return 'absent';
    if (error instanceof ApiError && error.status === 401) return 'rejected';
    return 'error';
  }
}

export function forgetMe() {
  current = null;
  render();
}

export const me = () => current;

/** Keep "calls left" current from a response's rate-limit headers. */
export function noteRemaining(headers) {
  if (current === null || typeof current.rate_limit?.limit !== 'number') return;
  const raw = headers.get('x-ratelimit-remaining');
  if (raw === null) return;
  const remaining = Number(raw);
  if (!Number.isFinite(remaining)) return;
  current = { ...current, rate_limit: { ...current.rate_limit, remaining } };
  render();
}
