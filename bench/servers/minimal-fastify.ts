// The second baseline: a minimal Fastify app with one route sending the captured bytes as a
// Buffer (what any Fastify service costs before it does anything). Usage: node bench/servers/minimal-fastify.ts <file> <port>
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const [file, port] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(file, 'utf8')) as { status: number; headers: Array<[string, string]>; body: string };
const body = Buffer.from(spec.body, 'base64');
const headers = Object.fromEntries(spec.headers.filter(([name]) => name.toLowerCase() !== 'content-length'));

const app = Fastify({ logger: false });
app.get('/*', (_request, reply) => {
  reply.headers(headers).send(body);
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
