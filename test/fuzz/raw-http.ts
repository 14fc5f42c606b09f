// Raw HTTP/1.1 over node:net for the malformed-request and socket fuzz tests: send exact bytes,
// read one response (Content-Length or chunked, or until the server closes), never wait past a
// timeout. Nothing here is lenient on purpose: a response we cannot parse is reported as such.
import { connect } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface RawResponse {
  /** 0 when no status line arrived. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection (before or after the response). */
  closed: boolean;
  /** No complete response within the timeout. */
  timedOut: boolean;
  /** Bytes received, for failure messages. */
  raw: string;
}

interface Parsed {
  status: number;
  headers: Record<string, string>;
  body: string;
  complete: boolean;
}

/** Body bytes as text, gunzipped when the response says so (a bad gzip stays raw: not JSON). */
function decode(headers: Record<string, string>, bytes: Buffer): string {
  if (/gzip/i.test(headers['content-encoding'] ?? '') && bytes.length > 0) {
    try {
      return gunzipSync(bytes).toString('utf8');
    } catch {
      return bytes.toString('latin1');
    }
  }
  return bytes.toString('utf8');
}

function parse(buffer: Buffer, toHead = false): Parsed | undefined {
  const end = buffer.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = buffer.subarray(0, end).toString('latin1').split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '');
  const status = match ? Number(match[1]) : 0;
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = buffer.subarray(end + 4);
  // A response to HEAD never has a body, whatever its Content-Length says.
  if (toHead) return { status, headers, body: '', complete: true };
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    return { status, headers, body: decode(headers, rest.subarray(0, length)), complete: rest.length >= length };
  }
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const chunks: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n', at);
      if (lineEnd < 0) return { status, headers, body: decode(headers, Buffer.concat(chunks)), complete: false };
      const size = Number.parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
      if (!Number.isFinite(size)) return { status, headers, body: '', complete: false };
      if (size === 0) return { status, headers, body: decode(headers, Buffer.concat(chunks)), complete: true };
      if (rest.length < lineEnd + 2 + size + 2) return { status, headers, body: decode(headers, Buffer.concat(chunks)), complete: false };
      chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  // 1xx/204/304 have no body; anything else without framing ends when the server closes.
  const bodiless = status < 200 || status === 204 || status === 304;
  return { status, headers, body: decode(headers, rest), complete: bodiless };
}

/**
 * Send `request` (bytes as given) and read one response; resolves, never rejects. `end`: half-close
 * half-way through the timeout if nothing came back, so a request that promised more bytes than it
 * sent ends at EOF instead of waiting for the server's request timeout.
 */
export function rawRequest(port: number, request: string | Buffer, timeoutMs = 2_000, end = false): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const toHead = (typeof request === 'string' ? request.slice(0, 5) : request.subarray(0, 5).toString('latin1')) === 'HEAD ';
    const received: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean, timedOut: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(halfClose);
      socket.destroy();
      const buffer = Buffer.concat(received);
      const parsed = parse(buffer, toHead);
      resolve({
        status: parsed?.status ?? 0,
        headers: parsed?.headers ?? {},
        body: parsed?.body ?? '',
        closed,
        timedOut: timedOut && !(parsed?.complete ?? false),
        raw: buffer.toString('latin1').slice(0, 400),
      });
    };
    const timer = setTimeout(() => finish(false, true), timeoutMs);
    // `end`: half-close only once the server has had half the time to answer. A FIN right after a
    // complete request reads as a client that went away (node, like nginx, then drops the answer);
    // a request still owing body bytes ends at this EOF and is answered in the other half.
    let halfClose: NodeJS.Timeout | undefined;
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      if (parse(Buffer.concat(received), toHead)?.complete) finish(false, false);
    });
    socket.on('error', () => finish(true, false));
    socket.on('close', () => finish(true, false));
    socket.on('connect', () => {
      socket.write(request);
      if (end) halfClose = setTimeout(() => socket.end(), timeoutMs / 2);
    });
  });
}

export interface ErrorBodyShape {
  code: number;
  message: string;
  error: string;
  request_id: string;
  details?: unknown;
}

/** The body as our error body, or a description of why it is not one. */
export function asErrorBody(res: { status: number; body: string }): ErrorBodyShape | string {
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    return `not JSON: ${JSON.stringify(res.body.slice(0, 200))}`;
  }
  const b = body as Record<string, unknown>;
  if (b === null || typeof b !== 'object' || Array.isArray(b)) return `not an object: ${res.body.slice(0, 200)}`;
  if (b.code !== res.status) return `code ${String(b.code)} != status ${res.status}`;
  if (typeof b.message !== 'string' || typeof b.error !== 'string' || !/^[A-Z][A-Z0-9_]*$/.test(b.error)) return `bad message/error: ${res.body.slice(0, 200)}`;
  if (typeof b.request_id !== 'string' || b.request_id === '') return 'no request_id';
  const allowed = new Set(['code', 'message', 'error', 'request_id', 'details', 'retry_after_ms']);
  const extra = Object.keys(b).filter((k) => !allowed.has(k));
  if (extra.length > 0) return `unexpected fields ${extra.join(',')}`;
  return b as unknown as ErrorBodyShape;
}
