// Issue 14.3: keys reach no log line whatever the encoding of the parameter NAME. Redaction parses
// the query the way the query-string parser does (URLSearchParams), so any spelling that
// authenticates is masked; the raw name is kept so the log shows what was sent.
import { describe, expect, it } from 'vitest';
import { parseQueryString } from '../../src/http/querystring.ts';
import { isSecretParam, redactUrl } from '../../src/http/redact.ts';

const KEY = 'demo-key';

describe('redactUrl', () => {
  it.each([
    ['api_key', '/v1/quotes?symbols=AAPL.US&api_key=[redacted]'],
    ['%61pi_key', '/v1/quotes?symbols=AAPL.US&%61pi_key=[redacted]'],
    ['api_k%65y', '/v1/quotes?symbols=AAPL.US&api_k%65y=[redacted]'],
    ['api%5Fkey', '/v1/quotes?symbols=AAPL.US&api%5Fkey=[redacted]'],
    ['api%5fkey', '/v1/quotes?symbols=AAPL.US&api%5fkey=[redacted]'],
    ['%61%70%69%5F%6B%65%79', '/v1/quotes?symbols=AAPL.US&%61%70%69%5F%6B%65%79=[redacted]'],
    ['API_KEY', '/v1/quotes?symbols=AAPL.US&API_KEY=[redacted]'],
    ['Api_Key', '/v1/quotes?symbols=AAPL.US&Api_Key=[redacted]'],
    ['apikey', '/v1/quotes?symbols=AAPL.US&apikey=[redacted]'],
    ['api-key', '/v1/quotes?symbols=AAPL.US&api-key=[redacted]'],
    ['x-api-key', '/v1/quotes?symbols=AAPL.US&x-api-key=[redacted]'],
    ['api+key', '/v1/quotes?symbols=AAPL.US&api+key=[redacted]'],
    ['token', '/v1/quotes?symbols=AAPL.US&token=[redacted]'],
  ])('%s', (name, expected) => {
    expect(redactUrl(`/v1/quotes?symbols=AAPL.US&${name}=${KEY}`)).toBe(expected);
  });

  it('every spelling the query parser decodes to api_key is masked (the ones that authenticate)', () => {
    const hex = (c: string) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
    const name = 'api_key';
    // every subset of characters percent-encoded, upper- and lower-case hex
    for (let mask = 0; mask < 1 << name.length; mask++) {
      for (const upper of [false, true]) {
        const spelled = [...name].map((c, i) => (mask & (1 << i) ? (upper ? hex(c).toUpperCase() : hex(c)) : c)).join('');
        const url = `/v1/quotes?${spelled}=${KEY}&symbols=AAPL.US`;
        expect(parseQueryString(url.split('?')[1]).api_key).toBe(KEY);
        const redacted = redactUrl(url);
        expect(redacted, url).not.toContain(KEY);
        expect(redacted).toBe(`/v1/quotes?${spelled}=[redacted]&symbols=AAPL.US`);
      }
    }
  });

  it('repeated, valueless, first and last positions; values with encoded separators', () => {
    expect(redactUrl(`/x?api_key=${KEY}&api_key=${KEY}`)).toBe('/x?api_key=[redacted]&api_key=[redacted]');
    expect(redactUrl('/x?api_key')).toBe('/x?api_key=[redacted]');
    expect(redactUrl(`/x?api_key=a%26b%3D${KEY}&symbols=A.US`)).toBe('/x?api_key=[redacted]&symbols=A.US');
    expect(redactUrl(`/x?api_key=${KEY}#frag`)).toBe('/x?api_key=[redacted]');
  });

  it('leaves other URLs untouched (the same string, no copy)', () => {
    const url = '/v1/klines?symbol=600519.SH&period=1d&count=5&key_id=x&apikeys=1';
    expect(redactUrl(url)).toBe(url);
    expect(redactUrl('/healthz')).toBe('/healthz');
    expect(redactUrl('/x?%zz=1&%61pi_key=2')).toBe('/x?%zz=1&%61pi_key=[redacted]');
  });

  it('isSecretParam works on decoded names', () => {
    expect(['api_key', 'API_KEY', 'apiKey', 'api key', 'x_api_key', 'access_token', 'password'].every(isSecretParam)).toBe(true);
    expect(['symbols', 'key_id', 'apikeys', 'count'].some(isSecretParam)).toBe(false);
  });
});
