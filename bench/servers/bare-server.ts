// The baseline: a bare node:http server that answers every request with one pre-built response
// (the bytes and headers captured from the service). Usage: node bench/servers/bare-server.ts <file> <port>
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [file, port] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(file, 'utf8')) as { status: number; headers: Array<[string, string]>; body: string };
const body = Buffer.from(spec.body, 'base64');
// A flat [name, value, …] array is written as is, in this order and case.
const headers = spec.headers.flat();

const server = createServer((_req, res) => {
  res.writeHead(spec.status, headers);
  res.end(body);
});
// Fastify's default, so the `Keep-Alive: timeout=72` header node:http writes is the same too.
server.keepAliveTimeout = 72_000;
server.listen(Number(port), '127.0.0.1');
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
