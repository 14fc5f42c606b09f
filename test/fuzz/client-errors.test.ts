// Issue 14.7 on a bare Fastify wired exactly as src/app.ts must be (clientErrorHandler and
// HTTP_SERVER_OPTIONS as constructor options, installClientErrorHandling after): proves the
// handlers themselves. malformed-http.test.ts asks the same of the real app.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import {
  clientErrorHandler, clientErrorToAppError, HTTP_SERVER_OPTIONS, installClientErrorHandling, MAX_HEADER_BYTES, rawErrorResponse, sendError, toAppError,
} from '../../src/http/error-handler.ts';
import { AppError } from '../../src/errors.ts';
import { expectMalformedAnswer, MALFORMED_CASES } from './malformed-cases.ts';
import { rawRequest } from './raw-http.ts';

let app: FastifyInstance;
let port: number;
beforeAll(async () => {
  app = Fastify({ logger: false, clientErrorHandler, http: HTTP_SERVER_OPTIONS });
  installClientErrorHandling(app);
  app.setErrorHandler((error, request, reply) => sendError(request, reply, toAppError(error)));
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.post('/v1/quotes', async () => ({ data: [] }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await app.close();
});

describe('malformed HTTP on a bare Fastify with our handlers', () => {
  it.each(MALFORMED_CASES)('$name → $status $error', async (c) => {
    await expectMalformedAnswer(port, c);
  });

  it('HTTP/1.0 without Host is still served; so is Expect: 100-continue', async () => {
    const old = await rawRequest(port, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
    expect(JSON.parse(old.body)).toEqual({ status: 'ok' });
    const cont = await rawRequest(port, 'POST /v1/quotes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n{}');
    // The interim 100 comes first; the parser reads it as the answer only if nothing else followed.
    expect([100, 200]).toContain(cont.status);
  });

  it('a URL just under the limit is served', async () => {
    const path = `/healthz?pad=${'a'.repeat(MAX_HEADER_BYTES - 200)}`;
    const res = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(res.status).toBe(200);
  });
});

describe('clientErrorToAppError and rawErrorResponse', () => {
  it('maps parser codes to statuses', () => {
    const of = (code: string) => clientErrorToAppError(Object.assign(new Error('x'), { code }));
    expect(of('HPE_HEADER_OVERFLOW').status).toBe(431);
    expect(of('HPE_HEADER_OVERFLOW').details).toEqual({ max_header_bytes: 16_384 });
    expect(of('ERR_HTTP_REQUEST_TIMEOUT').reason).toBe('REQUEST_TIMEOUT');
    expect(of('ERR_HTTP_REQUEST_TIMEOUT').status).toBe(408);
    expect(of('HPE_INVALID_METHOD').details).toEqual({ parser: 'HPE_INVALID_METHOD' });
    expect(of('SOMETHING_ELSE').status).toBe(400);
    expect(of('SOMETHING_ELSE').details).toBeUndefined();
  });
  it('writes a complete HTTP/1.1 response with a byte-exact Content-Length', () => {
    const text = rawErrorResponse(new AppError('INVALID_PARAMETER', 'bad – très'), 'rid-1');
    const [head, body] = text.split('\r\n\r\n');
    expect(head.split('\r\n')).toEqual([
      'HTTP/1.1 400 Bad Request', 'Content-Type: application/json; charset=utf-8', `Content-Length: ${Buffer.byteLength(body)}`,
      'Cache-Control: no-store', 'Connection: close', 'X-Request-Id: rid-1',
    ]);
    expect(JSON.parse(body)).toEqual({ code: 400, message: 'bad – très', error: 'INVALID_PARAMETER', request_id: 'rid-1' });
  });
});
