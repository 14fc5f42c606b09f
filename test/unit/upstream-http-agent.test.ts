// The same client against a real local socket (no msw): proves Node 24's global fetch takes our
// undici 7 Agent as its dispatcher, reuses keep-alive sockets and honours the connection cap.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUpstreamHttp, type UpstreamClient } from '../../src/upstream/http.ts';
import { json } from '../helpers/fake-adapter.ts';

let server: Server;
let base = '';
let sockets = 0;
let resetNext = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (resetNext > 0) {
      resetNext--;
      req.socket.destroy();
      return;
    }
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path: req.url }));
    }, 5);
  });
  server.on('connection', () => { sockets++; });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function client(connections: number) {
  return createUpstreamHttp({
    adapterId: 'local',
    timeoutMs: 2_000,
    connections,
    retry: { maxRetries: 1, baseDelayMs: 1 },
    budget: { max: 1_000, windowMs: 1_000 },
  });
}

describe('createUpstreamHttp over a real socket', () => {
  it('sends every request of a burst over one capped keep-alive connection', async () => {
    sockets = 0;
    const c = client(1);
    const results = await Promise.all([1, 2, 3, 4].map((i) => json(c, { url: `${base}/q/${i}`, resource: 'quotes' })));
    expect(results.map((r) => r.body)).toEqual([1, 2, 3, 4].map((i) => ({ path: `/q/${i}` })));
    await json(c, { url: `${base}/q/5`, resource: 'quotes' });
    expect(sockets).toBe(1);
    await c.close();
  });

  it('retries once after the server resets the connection', async () => {
    resetNext = 1;
    const c = client(2);
    const res = await json(c, { url: `${base}/after-reset`, resource: 'quotes' });
    expect(res.body).toEqual({ path: '/after-reset' });
    expect(resetNext).toBe(0);
    await c.close();
  });
});
