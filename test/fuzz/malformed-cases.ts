// The malformed requests of issue 14.7, as exact bytes, with the answer each must get: our JSON
// error body (docs/contract.md#errors), Cache-Control: no-store and Connection: close.
import { expect } from 'vitest';
import { asErrorBody, rawRequest } from './raw-http.ts';

export interface MalformedCase {
  name: string;
  bytes: string | Buffer;
  status: number;
  error: string;
}

const manyHeaders = Array.from({ length: 3_000 }, (_, i) => `X-Filler-${i}: ${i}\r\n`).join('');

export const MALFORMED_CASES: MalformedCase[] = [
  { name: 'a garbage request line', bytes: 'GARBAGE\r\n\r\n', status: 400, error: 'INVALID_PARAMETER' },
  { name: 'an unknown method token', bytes: 'G(T /healthz HTTP/1.1\r\nHost: x\r\n\r\n', status: 400, error: 'INVALID_PARAMETER' },
  { name: 'HTTP/9.9', bytes: 'GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n', status: 400, error: 'INVALID_PARAMETER' },
  {
    name: 'Content-Length and Transfer-Encoding together',
    bytes: 'POST /v1/quotes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    status: 400, error: 'INVALID_PARAMETER',
  },
  {
    name: 'two different Content-Length values',
    bytes: 'POST /v1/quotes HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
    status: 400, error: 'INVALID_PARAMETER',
  },
  { name: 'a NUL byte in the URL', bytes: 'GET /v1/quotes?symbols=AAPL\0.US HTTP/1.1\r\nHost: x\r\n\r\n', status: 400, error: 'INVALID_PARAMETER' },
  { name: 'raw UTF-8 in the URL', bytes: Buffer.from('GET /v1/quotes?symbols=茅台.SH HTTP/1.1\r\nHost: x\r\n\r\n', 'utf8'), status: 400, error: 'INVALID_PARAMETER' },
  { name: 'a space inside the URL', bytes: 'GET /v1/quotes?symbols=A B HTTP/1.1\r\nHost: x\r\n\r\n', status: 400, error: 'INVALID_PARAMETER' },
  { name: 'a header line without a colon', bytes: 'GET /healthz HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n', status: 400, error: 'INVALID_PARAMETER' },
  { name: 'a bad chunk size', bytes: 'POST /v1/quotes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n', status: 400, error: 'INVALID_PARAMETER' },
  { name: 'a 20 KB URL', bytes: `GET /v1/quotes?symbols=${'A'.repeat(20 * 1024)}.US HTTP/1.1\r\nHost: x\r\n\r\n`, status: 431, error: 'HEADERS_TOO_LARGE' },
  { name: '3,000 headers', bytes: `GET /healthz HTTP/1.1\r\nHost: x\r\n${manyHeaders}\r\n`, status: 431, error: 'HEADERS_TOO_LARGE' },
  { name: 'one 17 KB header', bytes: `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(17 * 1024)}\r\n\r\n`, status: 431, error: 'HEADERS_TOO_LARGE' },
  { name: 'HTTP/1.1 without Host', bytes: 'GET /healthz HTTP/1.1\r\n\r\n', status: 400, error: 'INVALID_PARAMETER' },
  { name: 'CONNECT (we are not a proxy)', bytes: 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', status: 405, error: 'METHOD_NOT_ALLOWED' },
  { name: 'Expect: 999-nope', bytes: 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 999-nope\r\n\r\n', status: 417, error: 'EXPECTATION_FAILED' },
];

/** Send one case to the server on `port` and assert the whole answer. */
export async function expectMalformedAnswer(port: number, c: MalformedCase): Promise<void> {
  const res = await rawRequest(port, c.bytes, 3_000);
  expect(res.timedOut, `${c.name}: no answer (got ${JSON.stringify(res.raw)})`).toBe(false);
  expect(res.status, `${c.name}: ${JSON.stringify(res.raw)}`).toBe(c.status);
  const body = asErrorBody(res);
  expect(typeof body === 'string' ? body : 'ok', c.name).toBe('ok');
  expect(body, c.name).toMatchObject({ code: c.status, error: c.error });
  expect(res.headers['content-type'], c.name).toBe('application/json; charset=utf-8');
  expect(res.headers['cache-control'], c.name).toBe('no-store');
  expect(res.headers.connection, c.name).toBe('close');
}
