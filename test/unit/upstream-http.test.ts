import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { delay, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { AppError } from '../../src/errors.ts';
import {
  createUpstreamHttp, parseRetryAfter, type UpstreamClient, type UpstreamHttpOptions, type UpstreamOutcomeEvent,
} from '../../src/upstream/http.ts';
import { json } from '../helpers/fake-adapter.ts';

const URL_QUOTES = 'https://vendor.test/quotes?codes=600000.SH';
const server = setupServer();

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

let clock = 1_700_000_000_000;
let events: UpstreamOutcomeEvent[] = [];
const clients: UpstreamClient[] = [];

function client(overrides: Partial<UpstreamHttpOptions> = {}): UpstreamClient {
  clock = 1_700_000_000_000;
  events = [];
  const c = createUpstreamHttp({
    adapterId: 'vendor',
    timeoutMs: 300,
    connections: 2,
    retry: { maxRetries: 1, baseDelayMs: 2 },
    budget: { max: 100, windowMs: 60_000 },
    now: () => clock,
    random: () => 0.5,
    metrics: { upstream: (e) => events.push(e) },
    ...overrides,
  });
  clients.push(c);
  return c;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

/** Answers each call with the next responder; counts calls. */
function sequence(...responders: Array<() => Response | Promise<Response>>): { calls: () => number } {
  let calls = 0;
  server.use(http.get('https://vendor.test/quotes', () => {
    const responder = responders[Math.min(calls, responders.length - 1)];
    calls++;
    return responder();
  }));
  return { calls: () => calls };
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected a rejection');
}

const ok = () => HttpResponse.json({ data: [1, 2] });
const outcomes = () => events.map((e) => e.outcome);

describe('createUpstreamHttp', () => {
  it('returns the parsed body of a 200 and reports ok', async () => {
    let seen: Headers | undefined;
    server.use(http.get('https://vendor.test/quotes', ({ request }) => {
      seen = request.headers;
      return ok();
    }));
    const c = client();
    const res = await json(c, { url: URL_QUOTES, resource: 'quotes', headers: { 'x-key': 'k' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [1, 2] });
    expect(seen?.get('x-key')).toBe('k');
    expect(events).toEqual([{ adapter: 'vendor', resource: 'quotes', outcome: 'ok', ms: 0 }]);
  });

  it('request() returns the raw text', async () => {
    sequence(() => new HttpResponse('var q="1,2";', { status: 200 }));
    const res = await client().request({ url: URL_QUOTES, resource: 'quotes' });
    expect(res.text).toBe('var q="1,2";');
    expect(res.status).toBe(200);
  });

  it('retries a 503 once and returns the second answer', async () => {
    const s = sequence(() => new HttpResponse('busy', { status: 503 }), ok);
    const res = await json(client(), { url: URL_QUOTES, resource: 'quotes' });
    expect(res.body).toEqual({ data: [1, 2] });
    expect(s.calls()).toBe(2);
    expect(outcomes()).toEqual(['error', 'ok']);
  });

  it('gives UPSTREAM_ERROR after exactly 2 calls on 502 twice, without the vendor text', async () => {
    const s = sequence(() => new HttpResponse('secret vendor detail', { status: 502 }));
    const error = await failure(json(client(), { url: URL_QUOTES, resource: 'quotes' }));
    expect(error.reason).toBe('UPSTREAM_ERROR');
    expect(error.status).toBe(502);
    expect(error.details).toEqual({ adapter: 'vendor', status: 502 });
    expect(error.message).not.toContain('secret');
    expect(s.calls()).toBe(2);
    expect(outcomes()).toEqual(['error', 'error']);
  });

  it('does not retry when maxRetries is 0', async () => {
    const s = sequence(() => new HttpResponse(null, { status: 504 }));
    const error = await failure(json(client({ retry: { maxRetries: 0, baseDelayMs: 1 } }), { url: URL_QUOTES, resource: 'quotes' }));
    expect(error.reason).toBe('UPSTREAM_ERROR');
    expect(s.calls()).toBe(1);
  });

  it('does not retry when the backoff does not fit in the remaining deadline', async () => {
    const s = sequence(() => new HttpResponse(null, { status: 503 }), ok);
    const c = client({ retry: { maxRetries: 1, baseDelayMs: 400 } });
    const error = await failure(json(c, { url: URL_QUOTES, resource: 'quotes' }));
    expect(error.reason).toBe('UPSTREAM_ERROR');
    expect(s.calls()).toBe(1);
  });

  it('never retries a vendor 429: UPSTREAM_UNAVAILABLE with its Retry-After, then pauses the budget', async () => {
    const s = sequence(() => new HttpResponse('slow down', { status: 429, headers: { 'Retry-After': '7' } }), ok);
    const c = client();
    const error = await failure(json(c, { url: URL_QUOTES, resource: 'quotes' }));
    expect(error.reason).toBe('UPSTREAM_UNAVAILABLE');
    expect(error.status).toBe(503);
    expect(error.retryAfterSeconds).toBe(7);
    expect(s.calls()).toBe(1);

    clock += 2_000;
    const paused = await failure(json(c, { url: URL_QUOTES, resource: 'quotes' }));
    expect(paused.retryAfterSeconds).toBe(5);
    expect(s.calls()).toBe(1);
    expect(outcomes()).toEqual(['rate_limited', 'budget_exhausted']);

    clock += 5_000;
    expect((await json(c, { url: URL_QUOTES, resource: 'quotes' })).body).toEqual({ data: [1, 2] });
    expect(s.calls()).toBe(2);
  });

  it('uses 1 s when a 429 has no Retry-After', async () => {
    sequence(() => new HttpResponse(null, { status: 429 }));
    const error = await failure(json(client(), { url: URL_QUOTES, resource: 'quotes' }));
    expect(error.retryAfterSeconds).toBe(1);
  });

  it('times out a slow response with UPSTREAM_TIMEOUT and does not retry', async () => {
    const s = sequence(async () => {
      await delay(2_000);
      return ok();
    });
    const error = await failure(json(client({ timeoutMs: 50 }), { url: URL_QUOTES, resource: 'quotes' }));
    expect(error.reason).toBe('UPSTREAM_TIMEOUT');
    expect(error.status).toBe(504);
    expect(s.calls()).toBe(1);
    expect(outcomes()).toEqual(['timeout']);
  });

  it('times out a body that stalls after the headers', async () => {
    sequence(() => new HttpResponse(new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"data":'));
        // never closed: the body stalls
      },
    }), { status: 200, headers: { 'content-type': 'application/json' } }));
    const error = await failure(json(client({ timeoutMs: 50 }), { url: URL_QUOTES, resource: 'quotes' }));
    expect(error.reason).toBe('UPSTREAM_TIMEOUT');
  });

  it('honours a per-call deadlineMs', async () => {
    sequence(async () => {
      await delay(150);
      return ok();
    });
    const c = client({ timeoutMs: 50, maxDeadlineMs: 2_000 });
    const res = await json(c, { url: URL_QUOTES, resource: 'quotes', deadlineMs: 1_500 });
    expect(res.body).toEqual({ data: [1, 2] });
  });

  it('retries a network error once', async () => {
    const s = sequence(() => HttpResponse.error(), ok);
    const res = await json(client(), { url: URL_QUOTES, resource: 'quotes' });
    expect(res.body).toEqual({ data: [1, 2] });
    expect(s.calls()).toBe(2);
    expect(outcomes()).toEqual(['error', 'ok']);
  });

  it('gives UPSTREAM_ERROR after two network errors', async () => {
    const s = sequence(() => HttpResponse.error());
    const error = await failure(json(client(), { url: URL_QUOTES, resource: 'quotes' }));
    expect(error.reason).toBe('UPSTREAM_ERROR');
    expect(error.details).toEqual({ adapter: 'vendor' });
    expect(s.calls()).toBe(2);
  });

  it('passes accepted statuses through and fails other 4xx without a retry', async () => {
    const s = sequence(() => new HttpResponse(null, { status: 404 }));
    const c = client();
    const accepted = await json(c, { url: URL_QUOTES, resource: 'quotes', acceptStatus: [404] });
    expect(accepted).toMatchObject({ status: 404, body: undefined });
    const error = await failure(json(c, { url: URL_QUOTES, resource: 'quotes' }));
    expect(error.reason).toBe('UPSTREAM_ERROR');
    expect(error.details).toEqual({ adapter: 'vendor', status: 404 });
    expect(s.calls()).toBe(2);
  });

  it('keeps an AppError reason from the caller signal', async () => {
    sequence(async () => {
      await delay(2_000);
      return ok();
    });
    const controller = new AbortController();
    const pending = json(client(), { url: URL_QUOTES, resource: 'quotes', signal: controller.signal });
    setTimeout(() => controller.abort(new AppError('SHUTTING_DOWN', 'closing')), 10);
    const error = await failure(pending);
    expect(error.reason).toBe('SHUTTING_DOWN');
  });
});

describe('outbound budget in the http layer', () => {
  it('fails fast when spent and recovers when the window slides', async () => {
    const s = sequence(ok);
    const c = client({ budget: { max: 2, windowMs: 1_000 } });
    await json(c, { url: URL_QUOTES, resource: 'quotes' });
    clock += 400;
    await json(c, { url: URL_QUOTES, resource: 'quotes' });
    const spent = await failure(json(c, { url: URL_QUOTES, resource: 'quotes' }));
    expect(spent.reason).toBe('UPSTREAM_UNAVAILABLE');
    expect(spent.retryAfterSeconds).toBe(1);
    expect(s.calls()).toBe(2);
    expect(outcomes()).toEqual(['ok', 'ok', 'budget_exhausted']);
    clock += 600;
    await json(c, { url: URL_QUOTES, resource: 'quotes' });
    expect(s.calls()).toBe(3);
  });

  it('waits for room only while a slot frees before the caller\'s deadlineAt, passed in the request', async () => {
    const s = sequence(ok);
    const c = client({ timeoutMs: 5_000, budget: { max: 2, windowMs: 200 } });
    await json(c, { url: URL_QUOTES, resource: 'quotes' });
    await json(c, { url: URL_QUOTES, resource: 'quotes' });
    // A slot frees in 200 ms: a caller due in 100 ms is refused at once, though the client's own
    // timeout (5 s) would have room.
    const refused = await failure(json(c, { url: URL_QUOTES, resource: 'quotes', deadlineAt: clock + 100 }));
    expect(refused.reason).toBe('UPSTREAM_UNAVAILABLE');
    expect(c.budgetState()).toMatchObject({ waits: 0, refused: 1 });
    expect(s.calls()).toBe(2);
    // A caller due in 1 s waits for the slot (the clock moves on while it sleeps) and goes.
    const waiting = json(c, { url: URL_QUOTES, resource: 'quotes', deadlineAt: clock + 1_000 });
    setTimeout(() => { clock += 200; }, 50);
    await waiting;
    expect(c.budgetState()).toMatchObject({ waits: 1, refused: 1 });
    expect(s.calls()).toBe(3);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds, HTTP dates and falls back to 1', () => {
    const nowMs = Date.parse('2026-01-05T10:00:00Z');
    expect(parseRetryAfter('120', nowMs)).toBe(120);
    expect(parseRetryAfter('0', nowMs)).toBe(1);
    expect(parseRetryAfter('Mon, 05 Jan 2026 10:00:30 GMT', nowMs)).toBe(30);
    expect(parseRetryAfter('Mon, 05 Jan 2026 09:00:00 GMT', nowMs)).toBe(1);
    expect(parseRetryAfter('soon', nowMs)).toBe(1);
    expect(parseRetryAfter(null, nowMs)).toBe(1);
  });
});
