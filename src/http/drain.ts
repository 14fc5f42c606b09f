// Connection bookkeeping for a graceful drain (issue 14.6). Node's closeIdleConnections() treats a
// connection whose request headers are still arriving as busy, so one half-sent request would hold
// shutdown for the whole grace period. Here a connection counts as busy only while a complete
// request is being answered (the http server attaches that response to the socket as
// `_httpMessage`, and detaches it when the response finishes).
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

interface HttpSocket extends Socket {
  parser?: unknown;
  _httpMessage?: { headersSent: boolean; setHeader(name: string, value: string): void } | null;
}

export interface ConnectionTracker {
  /** Close connections with no complete request in flight; mark running responses Connection: close. */
  drain(): void;
  /** Destroy every connection still open (upgraded ones included); returns how many there were. */
  destroyAll(): number;
  readonly size: number;
}

export function trackConnections(server: Server): ConnectionTracker {
  const sockets = new Set<HttpSocket>();
  server.on('connection', (socket: HttpSocket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    drain() {
      for (const socket of sockets) {
        // No parser: upgraded to a WebSocket (the stream module closes those) or already closing.
        if (socket.parser === null || socket.parser === undefined) continue;
        const response = socket._httpMessage;
        if (response === undefined || response === null) {
          socket.destroy();
        } else if (!response.headersSent) {
          // The client must not reuse this connection: nothing will answer on it after this response.
          response.setHeader('connection', 'close');
        }
      }
    },
    destroyAll() {
      const open = sockets.size;
      for (const socket of sockets) socket.destroy();
      return open;
    },
    get size() {
      return sockets.size;
    },
  };
}

/**
 * A close that cannot hang: drain now and every 50 ms as responses finish, and once `graceMs` has
 * passed destroy whatever is still open (a response that never ends, a socket nobody reads). Call
 * when the server stops listening; it stops itself when the server has closed.
 */
export function drainWithin(server: Server, connections: ConnectionTracker, graceMs: number, onForced: (open: number) => void): void {
  connections.drain();
  const sweep = setInterval(() => connections.drain(), 50);
  const deadline = setTimeout(() => {
    clearInterval(sweep);
    const open = connections.destroyAll();
    if (open > 0) onForced(open);
  }, graceMs);
  sweep.unref();
  deadline.unref();
  server.once('close', () => {
    clearInterval(sweep);
    clearTimeout(deadline);
  });
}
