// Issue 14.7 on the real app, listening on a real socket: every malformed request of
// MALFORMED_CASES gets our JSON error body. Needs the wiring in src/app.ts (clientErrorHandler,
// http: HTTP_SERVER_OPTIONS, installClientErrorHandling(app)).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { expectMalformedAnswer, MALFORMED_CASES } from './malformed-cases.ts';
import { asErrorBody, rawRequest } from './raw-http.ts';

let app: FastifyInstance;
let port: number;
beforeAll(async () => {
  ({ app } = await buildTestApp());
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await app.close();
});

describe('malformed HTTP against the real app', () => {
  it.each(MALFORMED_CASES)('$name → $status $error', async (c) => {
    await expectMalformedAnswer(port, c);
  });

  it('a well-formed request on the same server still works afterwards', async () => {
    const res = await rawRequest(port, `GET /v1/quotes?symbols=600519.SH HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEYS.demo}\r\nConnection: close\r\n\r\n`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).data[0].symbol).toBe('600519.SH');
  });

  it('a missing Host is refused before the key check, with the request id echoed', async () => {
    const res = await rawRequest(port, 'GET /v1/quotes?symbols=600519.SH HTTP/1.1\r\nX-Request-Id: host-test-1\r\n\r\n');
    expect(res.status).toBe(400);
    expect(asErrorBody(res)).toEqual({
      code: 400, error: 'INVALID_PARAMETER', message: 'the Host header is required', request_id: 'host-test-1', details: { header: 'host' },
    });
  });
});
