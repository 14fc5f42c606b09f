// Shared pieces of the vendor msw handlers: fixture loading and request capture, so adapter tests
// can assert the outgoing request (method, path, query, headers, body) as well as the result.

import { readFileSync } from 'node:fs';

export interface CapturedRequest {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
}

const FIXTURES = new URL('../fixtures/', import.meta.url);

/** `mocks/fixtures/<vendor>/<name>.json`, parsed fresh on every call (tests may mutate it). */
export function fixture<T = unknown>(vendor: string, name: string): T {
  return JSON.parse(readFileSync(new URL(`${vendor}/${name}.json`, FIXTURES), 'utf8')) as T;
}

/** Records a request (cloned, so the handler can still read the body) and returns its URL. */
export async function capture(log: CapturedRequest[], request: Request): Promise<URL> {
  const url = new URL(request.url);
  const body = request.method === 'GET' ? '' : await request.clone().text();
  log.push({ method: request.method, url, headers: request.headers, body });
  return url;
}

/** Comma-list query parameter → items. */
export function listParam(url: URL, name: string): string[] {
  return (url.searchParams.get(name) ?? '').split(',').filter((s) => s !== '');
}
