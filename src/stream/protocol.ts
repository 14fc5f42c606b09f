// The stream's wire protocol (docs/vendors.md#tickflow-stream): client messages are parsed and
// checked here; server frames are built here as strings, so every push is serialised once.
import { AppError, type Reason } from '../errors.ts';
import { parseSymbolList } from '../markets/symbols.ts';
import type { SymbolRef } from '../domain.ts';

export const CHANNELS = ['quotes', 'depth'] as const;
export type Channel = (typeof CHANNELS)[number];

export interface ClientRequest {
  op: 'subscribe' | 'unsubscribe';
  channel: Channel;
  refs: SymbolRef[];
  /** Resume (subscribe only): the last `seq` the client saw, per symbol of `refs`. */
  since?: Map<string, number>;
}

const MAX_LISTED = 20;

function short(text: string): string {
  return text.length > 32 ? `${text.slice(0, 32)}…` : text;
}

/**
 * One client message → a request, or an AppError that becomes an `error` frame. `legacy` is the
 * quotes-only `/v1/ws/quotes` form, whose messages carry no channel.
 */
export function parseClientMessage(raw: string, legacy: boolean): ClientRequest {
  let message: unknown;
  try {
    message = JSON.parse(raw);
  } catch {
    throw new AppError('INVALID_PARAMETER', 'the message is not valid JSON');
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    throw new AppError('INVALID_PARAMETER', 'the message must be a JSON object like {"op":"subscribe","channel":"quotes","symbols":["600519.SH"]}');
  }
  const { op, channel, symbols, since } = message as Record<string, unknown>;
  if (op !== 'subscribe' && op !== 'unsubscribe') {
    throw new AppError('INVALID_PARAMETER', `unknown op ${JSON.stringify(short(String(op)))}; use subscribe or unsubscribe`, { details: { op: typeof op === 'string' ? short(op) : null } });
  }
  let ch: Channel;
  if (legacy) {
    if (channel !== undefined && channel !== 'quotes') {
      throw new AppError('INVALID_PARAMETER', '/v1/ws/quotes carries the quotes channel only; use /v1/ws/stream for depth', { details: { channel: short(String(channel)) } });
    }
    ch = 'quotes';
  } else if (channel === 'quotes' || channel === 'depth') {
    ch = channel;
  } else {
    throw new AppError('INVALID_PARAMETER', `unknown channel ${JSON.stringify(short(String(channel)))}; use quotes or depth`, { details: { channel: typeof channel === 'string' ? short(channel) : null } });
  }
  if (!Array.isArray(symbols) || symbols.length === 0) {
    throw new AppError('INVALID_PARAMETER', 'symbols must be a non-empty array of symbols, e.g. ["600519.SH"]');
  }
  if (symbols.some((s) => typeof s !== 'string')) throw new AppError('INVALID_SYMBOL', 'symbols must contain only strings');
  const items = (symbols as string[]).map((s) => s.trim()).filter((s) => s !== '');
  const { refs, invalid } = parseSymbolList(items);
  if (invalid.length > 0) {
    throw new AppError('INVALID_SYMBOL', `not valid symbols: ${invalid.slice(0, MAX_LISTED).map(short).join(', ')}${invalid.length > MAX_LISTED ? ', …' : ''}`, {
      details: { symbols: invalid.slice(0, 100).map(short) },
    });
  }
  if (refs.length === 0) throw new AppError('INVALID_PARAMETER', 'symbols is empty: give at least one symbol');
  if (since === undefined || op === 'unsubscribe') return { op, channel: ch, refs };
  return { op, channel: ch, refs, since: parseSince(since, refs) };
}

/** `since`: {"600519.SH": 1234}, the last seq seen per symbol; symbols are matched as `symbols` are. */
function parseSince(since: unknown, refs: SymbolRef[]): Map<string, number> {
  if (since === null || typeof since !== 'object' || Array.isArray(since)) {
    throw new AppError('INVALID_PARAMETER', 'since must be an object of the last seq seen per symbol, e.g. {"600519.SH":1234}');
  }
  const wanted = new Set(refs.map((r) => r.symbol));
  const out = new Map<string, number>();
  for (const [key, value] of Object.entries(since as Record<string, unknown>)) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      throw new AppError('INVALID_PARAMETER', `since.${short(key)} must be a non-negative integer (the last seq seen)`, { details: { symbol: short(key) } });
    }
    const symbol = parseSymbolList([key.trim()]).refs[0]?.symbol;
    if (symbol !== undefined && wanted.has(symbol)) out.set(symbol, value);
  }
  return out;
}

/**
 * Close codes the server sends besides the standard ones (1001 shutting down, 1009 too big, 1013
 * too slow): 4401 the key was revoked or expired, 4403 the key's plan no longer permits this
 * stream, 4429 the plan now allows fewer connections than the key has (the newest are closed).
 * A client should not reconnect with the same key after 4401 or 4403.
 */
export const CLOSE = {
  keyRevoked: { code: 4401, reason: 'key revoked' },
  keyExpired: { code: 4401, reason: 'key expired' },
  planForbids: { code: 4403, reason: 'plan no longer permits this stream' },
  tooManyConnections: { code: 4429, reason: 'too many connections for this key' },
} as const;

export type CloseCause = (typeof CLOSE)[keyof typeof CLOSE];

/** `{"op":"error",...}`: the REST error body's fields (docs/contract.md#errors) minus request_id. */
export function errorFrame(error: AppError | { reason: Reason; status: number; message: string; details?: unknown }, retryAfterMs?: number): string {
  const body: Record<string, unknown> = { op: 'error', code: error.status, error: error.reason, message: error.message };
  if (error.details !== undefined) body.details = error.details;
  if (retryAfterMs !== undefined) body.retry_after_ms = retryAfterMs;
  return JSON.stringify(body);
}

export function ackFrame(op: 'subscribed' | 'unsubscribed', channel: Channel, symbols: readonly string[], total: number): string {
  return JSON.stringify({ op, channel, symbols, total });
}

/** `{"op":"heartbeat",...}`: the server's time and the last seq of each subscribed symbol. */
export function heartbeatFrame(time: number, lastSeq: Record<Channel, Record<string, number>>): string {
  return JSON.stringify({ op: 'heartbeat', time, last_seq: lastSeq });
}

/** A data frame from per-symbol JSON fragments that were each serialised once. */
export function dataFrame(channel: Channel, fragments: readonly string[]): string {
  return `{"op":"${channel}","data":[${fragments.join(',')}]}`;
}
