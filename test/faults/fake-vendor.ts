// A misbehaving vendor on a real socket (127.0.0.1, port 0): each request is answered by the
// current `respond` function, which can also reset the connection, never send headers, or stall
// half-way through a body. Adapters reach it through their configured base URL, over the same
// undici Agent they use in production (no msw: transport faults must be real).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type VendorReply =
  | { kind: 'json'; body: unknown; status?: number; headers?: Record<string, string> }
  | { kind: 'text'; text: string; status?: number; contentType?: string; headers?: Record<string, string> }
  /** Headers and half of the body are sent, then the connection is reset. */
  | { kind: 'reset-mid-body'; text: string }
  /** The request is read and never answered. */
  | { kind: 'hang' }
  /** Headers and a first chunk of a longer body are sent, then nothing more. */
  | { kind: 'stall-body'; text: string };

export interface FakeVendor {
  baseUrl: string;
  /** Request URLs (path and query) in arrival order. */
  calls: URL[];
  respond: (url: URL, method: string) => VendorReply;
  close(): Promise<void>;
}

function send(res: ServerResponse, reply: VendorReply): void {
  switch (reply.kind) {
    case 'json': {
      const text = JSON.stringify(reply.body);
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...reply.headers });
      res.end(text);
      return;
    }
    case 'text':
      res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json', 'content-length': Buffer.byteLength(reply.text), ...reply.headers });
      res.end(reply.text);
      return;
    case 'reset-mid-body': {
      const bytes = Buffer.from(reply.text);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
      res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => {
        res.socket?.resetAndDestroy();
      });
      return;
    }
    case 'stall-body': {
      const bytes = Buffer.from(reply.text);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
      res.write(bytes.subarray(0, Math.floor(bytes.length / 2)));
      return;
    }
    case 'hang':
      return;
  }
}

export async function startFakeVendor(respond: FakeVendor['respond']): Promise<FakeVendor> {
  const sockets = new Set<Socket>();
  const vendor: FakeVendor = {
    baseUrl: '',
    calls: [],
    respond,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://vendor.local');
    vendor.calls.push(url);
    req.resume();
    req.on('end', () => send(res, vendor.respond(url, req.method ?? 'GET')));
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  vendor.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return vendor;
}

/** A base URL where nothing listens: connections are refused. */
export async function refusedBaseUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
