// app.close() cannot hang (http/drain.ts drainWithin, wired in src/app.ts): a connection whose
// request never finished arriving closes at once, a response still running may finish inside
// server.shutdownGraceMs (ending with Connection: close), and whatever is still open at the
// deadline is destroyed. Before, one half-sent request or one response that never ended held
// app.close() (and so a test run or a deploy) for as long as the peer liked.
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createSimAdapter } from '../../adapters/sim/index.ts';
import { buildTestApp, CN_MORNING, KEYS } from '../helpers/app.ts';
import { fakeAdapter, type FakeAdapter } from '../helpers/fake-adapter.ts';
import { captureLines } from '../helpers/log-lines.ts';

const opened: Socket[] = [];
afterEach(() => {
  for (const socket of opened.splice(0)) socket.destroy();
});

async function start(graceMs: number): Promise<{ app: FastifyInstance; vendor: FakeAdapter; port: number; lines: string[] }> {
  const vendor = fakeAdapter(createSimAdapter({}, { now: () => CN_MORNING }));
  const { stream, lines } = captureLines();
  const { app } = await buildTestApp({
    adapters: new Map([['sim', vendor]]),
    logger: { level: 'warn', stream } as never,
    configure: (config) => {
      config.server.shutdownGraceMs = graceMs;
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, vendor, port: (app.server.address() as AddressInfo).port, lines };
}

/** A raw client: what it received, and whether the server closed it. */
function client(port: number, bytes: string): { received: () => string; closed: Promise<void> } {
  const socket = connect({ port, host: '127.0.0.1' });
  opened.push(socket);
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  socket.on('error', () => undefined);
  socket.on('connect', () => socket.write(bytes));
  return { received: () => received, closed: new Promise((resolve) => socket.once('close', () => resolve())) };
}

async function timed(promise: Promise<unknown>): Promise<number> {
  const started = performance.now();
  await promise;
  return performance.now() - started;
}

const quoteRequest = `GET /v1/quotes?symbols=600519.SH HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEYS.demo}\r\n\r\n`;

describe('app.close() is bounded', () => {
  it('a connection whose request headers never finished is closed at once, not after the headers timeout', async () => {
    const { app, port } = await start(10_000);
    const half = client(port, 'GET /v1/quotes?symbols=600519.SH HTTP/1.1\r\nHost: x\r\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const ms = await timed(app.close());
    await half.closed;
    expect(ms).toBeLessThan(2_000);
    expect(half.received()).toBe('');
  });

  it('a response still running finishes inside the grace, with Connection: close', async () => {
    const { app, vendor, port } = await start(5_000);
    vendor.hold();
    const running = client(port, quoteRequest);
    while (vendor.count('getQuotes') === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const closing = app.close();
    setTimeout(() => vendor.release(), 200);
    const ms = await timed(closing);
    await running.closed;
    expect(running.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(running.received().toLowerCase()).toContain('connection: close');
    expect(ms).toBeLessThan(4_000);
  });

  it('a response that never ends is cut off at the grace deadline, and the log says so', async () => {
    const { app, vendor, port, lines } = await start(300);
    vendor.hold();
    const stuck = client(port, quoteRequest);
    while (vendor.count('getQuotes') === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const ms = await timed(app.close());
    await stuck.closed;
    vendor.release();
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(2_500);
    expect(stuck.received()).toBe('');
    expect(lines.map((l) => JSON.parse(l) as { msg: string; connections?: number })).toContainEqual(
      expect.objectContaining({ msg: 'shutdown grace over: closed connections still open', connections: 1 }),
    );
  });
});
