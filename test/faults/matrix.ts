// The vendor fault matrix (issue 14, docs/contract.md#errors, docs/architecture.md#upstream-resilience): tickflow, eastmoney and yahoo, each on
// its production HTTP layer against a fake vendor on a real socket, through the routes. Every
// fault has one defined answer: status and reason, within the service deadline, and a 200 never
// carries a row that breaks the invariants of docs/contract.md#shapes-and-units.
//
// Outcomes (single-symbol requests, so "every symbol failed" applies to quotes):
//   transport: refused, reset mid-body, 5xx (after one retry)   → 502 UPSTREAM_ERROR
//              no headers, stalled body                          → 504 UPSTREAM_TIMEOUT at the deadline
//              429 (never retried)                               → 503 UPSTREAM_UNAVAILABLE, Retry-After
//                                                                  the vendor's (7) or 1 without one
//   body:      200 with the vendor's error envelope              → 502 UPSTREAM_ERROR
//              truncated JSON, HTML, a wrong type, a NaN literal → 502 UPSTREAM_BAD_RESPONSE
//   quote:     negative/non-finite price, negative volume        → the quote is dropped; nothing usable
//                                                                  → 502 UPSTREAM_BAD_RESPONSE
//              no quote                                          → 200, data [], X-Missing-Symbols
//              the symbol twice                                  → 200 with the newest copy
//   candles:   one bad row (negative, non-finite, high < low)    → 200 without that row
//              no rows                                           → 200 with empty columns
//              unequal columns (or a short text row)             → 502 UPSTREAM_BAD_RESPONSE
//              a repeated or an out-of-order row                 → 200, the same bars as the clean payload
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { refusedBaseUrl, startFakeVendor, type FakeVendor, type VendorReply } from './fake-vendor.ts';
import { buildFaultApp, closeFaultApp, expectAnswer, timedGet, type Answer, type CaseApp } from './harness.ts';
import { RAW_INFINITY, RAW_NAN, vendorText, type FaultResource, type VendorSpec } from './vendors.ts';

type Route = 'quotes' | 'candles';
/** What the faulted resource gets, given its clean body; undefined: the URL refuses connections. */
type Fault = ((clean: unknown, spec: VendorSpec) => VendorReply) | 'refused';

interface Case {
  name: string;
  route: Route;
  fault: Fault;
  status: number;
  error?: string;
  applies?: (spec: VendorSpec) => boolean;
  /** Further checks on the answer; `baseline` is the clean answer of the same route. */
  check?: (answer: Answer, baseline: Answer, spec: VendorSpec) => void;
}

const json = (body: unknown, status = 200, headers?: Record<string, string>): VendorReply => ({ kind: 'text', text: vendorText(body), status, headers });
const edit = (f: (clean: unknown, spec: VendorSpec) => unknown): Fault => (clean, spec) => json(f(clean, spec));

const BAR_FIELDS = ['timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount'] as const;
type Bars = Record<(typeof BAR_FIELDS)[number], number[]>;
const bars = (a: Answer) => a.body.data as Bars;
const without = (b: Bars, row: number) => Object.fromEntries(BAR_FIELDS.map((f) => [f, b[f].filter((_, i) => i !== row)]));
const pick = (b: Bars) => Object.fromEntries(BAR_FIELDS.map((f) => [f, b[f]]));
/** Non-finite in the vendor's format: a 1e999 literal in JSON, the text `Infinity` in a text row. */
const infinite = (spec: VendorSpec) => (spec.id === 'eastmoney' ? 'Infinity' : RAW_INFINITY);

const rowDropped = (row: number) => (answer: Answer, baseline: Answer) => {
  expect(bars(baseline).timestamp.length).toBeGreaterThan(row);
  expect(pick(bars(answer))).toEqual(without(bars(baseline), row));
};
const sameBars = (answer: Answer, baseline: Answer) => {
  expect(pick(bars(answer))).toEqual(pick(bars(baseline)));
};
const noQuote = (answer: Answer, _baseline: Answer, spec: VendorSpec) => {
  expect(answer.body.data).toEqual([]);
  expect(answer.res.headers['x-missing-symbols']).toBe(spec.symbol);
};

const TRANSPORT: Array<Omit<Case, 'route'>> = [
  { name: 'connection refused', fault: 'refused', status: 502, error: 'UPSTREAM_ERROR' },
  { name: 'reset mid-body', fault: (clean) => ({ kind: 'reset-mid-body', text: vendorText(clean) }), status: 502, error: 'UPSTREAM_ERROR' },
  { name: 'no headers (hang)', fault: () => ({ kind: 'hang' }), status: 504, error: 'UPSTREAM_TIMEOUT' },
  { name: 'stalled body', fault: (clean) => ({ kind: 'stall-body', text: vendorText(clean) }), status: 504, error: 'UPSTREAM_TIMEOUT' },
  { name: '500', fault: () => json({ message: 'oops' }, 500), status: 502, error: 'UPSTREAM_ERROR' },
  { name: '503', fault: () => ({ kind: 'text', text: 'busy', status: 503, contentType: 'text/plain' }), status: 502, error: 'UPSTREAM_ERROR' },
  {
    name: '429 with Retry-After: 7', fault: () => json({}, 429, { 'retry-after': '7' }), status: 503, error: 'UPSTREAM_UNAVAILABLE',
    check: (a) => expect(a.res.headers['retry-after']).toBe('7'),
  },
  {
    name: '429 without Retry-After', fault: () => json({}, 429), status: 503, error: 'UPSTREAM_UNAVAILABLE',
    check: (a) => expect(a.res.headers['retry-after']).toBe('1'),
  },
  { name: '200 with an error body', fault: (_c, spec) => json(spec.errorBody200), status: 502, error: 'UPSTREAM_ERROR' },
  { name: 'truncated JSON', fault: (clean) => ({ kind: 'text', text: vendorText(clean).slice(0, 40) }), status: 502, error: 'UPSTREAM_BAD_RESPONSE' },
  { name: 'HTML', fault: () => ({ kind: 'text', text: '<html><body>maintenance</body></html>', contentType: 'text/html' }), status: 502, error: 'UPSTREAM_BAD_RESPONSE' },
];

const CASES: Case[] = [
  ...TRANSPORT.map((c) => ({ ...c, route: 'quotes' as const })),
  ...TRANSPORT.filter((c) => ['no headers (hang)', 'reset mid-body', 'truncated JSON', '429 without Retry-After'].includes(c.name)).map((c) => ({ ...c, route: 'candles' as const })),

  { route: 'quotes', name: 'a price of the wrong type', fault: edit((c, s) => s.setQuote(c, 'price', 'abc')), status: 502, error: 'UPSTREAM_BAD_RESPONSE' },
  { route: 'quotes', name: 'a NaN literal', fault: edit((c, s) => s.setQuote(c, 'price', RAW_NAN)), status: 502, error: 'UPSTREAM_BAD_RESPONSE' },
  { route: 'quotes', name: 'an Infinity price', fault: edit((c, s) => s.setQuote(c, 'price', RAW_INFINITY)), status: 502, error: 'UPSTREAM_BAD_RESPONSE' },
  { route: 'quotes', name: 'a negative price', fault: edit((c, s) => s.setQuote(c, 'price', -10.5)), status: 502, error: 'UPSTREAM_BAD_RESPONSE' },
  { route: 'quotes', name: 'a negative volume', fault: edit((c, s) => s.setQuote(c, 'volume', -10_000)), status: 502, error: 'UPSTREAM_BAD_RESPONSE' },
  { route: 'quotes', name: 'no quote (empty)', fault: edit((c, s) => s.emptyQuotes(c)), status: 200, check: noQuote },
  {
    route: 'quotes', name: 'the symbol twice, the older copy last', fault: edit((c, s) => s.duplicateQuote!(c)), status: 200,
    applies: (s) => s.duplicateQuote !== undefined,
    check: (a, baseline) => expect(a.body.data).toEqual(baseline.body.data),
  },

  { route: 'candles', name: 'a close of the wrong type', fault: edit((c, s) => s.setBar(c, 1, 'close', 'abc')), status: 502, error: 'UPSTREAM_BAD_RESPONSE' },
  { route: 'candles', name: 'a NaN literal', fault: edit((c, s) => s.setBar(c, 1, 'close', RAW_NAN)), status: 502, error: 'UPSTREAM_BAD_RESPONSE', applies: (s) => s.id !== 'eastmoney' },
  { route: 'candles', name: 'a negative close in one row', fault: edit((c, s) => s.setBar(c, 2, 'close', -4)), status: 200, check: rowDropped(2) },
  { route: 'candles', name: 'a non-finite close in one row', fault: edit((c, s) => s.setBar(c, 2, 'close', infinite(s))), status: 200, check: rowDropped(2) },
  { route: 'candles', name: 'a negative volume in one row', fault: edit((c, s) => s.setBar(c, 3, 'volume', -10_000)), status: 200, check: rowDropped(3) },
  { route: 'candles', name: 'high below low in one row', fault: edit((c, s) => s.setBar(c, 1, 'high', 1)), status: 200, check: rowDropped(1) },
  {
    route: 'candles', name: 'no rows (empty arrays)', fault: edit((c, s) => s.emptyBars(c)), status: 200,
    check: (a) => expect(bars(a).timestamp).toEqual([]),
  },
  { route: 'candles', name: 'unequal columns', fault: edit((c, s) => s.unequalColumns(c)), status: 502, error: 'UPSTREAM_BAD_RESPONSE' },
  { route: 'candles', name: 'a repeated row', fault: edit((c, s) => s.duplicateRow(c, 2)), status: 200, check: sameBars },
  { route: 'candles', name: 'two rows out of order', fault: edit((c, s) => s.swapRows(c, 1, 3)), status: 200, check: sameBars },
];

const ROUTE_URL: Record<Route, (spec: VendorSpec) => string> = {
  quotes: (spec) => `/v1/quotes?symbols=${spec.symbol}`,
  candles: (spec) => `/v1/klines?symbol=${spec.symbol}&period=1d&count=100&adjust=none`,
};
const ROUTE_RESOURCE: Record<Route, FaultResource> = { quotes: 'quotes', candles: 'candles' };

const open: Array<{ app: CaseApp; vendor?: FakeVendor }> = [];
afterEach(async () => {
  for (const { app, vendor } of open.splice(0)) {
    await closeFaultApp(app);
    await vendor?.close();
  }
});

/** A fresh vendor and app; `faulted` answers the route's resource, everything else is clean. */
async function answer(spec: VendorSpec, route: Route, fault?: Fault): Promise<{ answer: Answer; vendor?: FakeVendor }> {
  let baseUrl: string;
  let vendor: FakeVendor | undefined;
  if (fault === 'refused') {
    baseUrl = await refusedBaseUrl();
  } else {
    vendor = await startFakeVendor((url) => {
      const resource = spec.resourceOf(url);
      const clean = spec.clean(resource);
      return fault !== undefined && resource === ROUTE_RESOURCE[route] ? fault(clean, spec) : json(clean);
    });
    baseUrl = vendor.baseUrl;
  }
  const app = await buildFaultApp(spec.now, (c) => {
    c.routing.markets[spec.market] = [spec.id];
    c.adapters[spec.id] = spec.options(baseUrl);
  });
  open.push({ app, vendor });
  return { answer: await timedGet(app.app, ROUTE_URL[route](spec)), vendor };
}

const baselines = new Map<string, Answer>();
async function baseline(spec: VendorSpec, route: Route): Promise<Answer> {
  const key = `${spec.id}|${route}`;
  if (!baselines.has(key)) baselines.set(key, (await answer(spec, route)).answer);
  return baselines.get(key)!;
}

/** Registers the whole matrix for one vendor (call at the top level of a test file). */
export function vendorMatrix(spec: VendorSpec): void {
  let run = 0;
  afterAll(() => {
    console.log(`vendor fault matrix, ${spec.id}: ${run} cases run`);
  });
  describe(spec.id, () => {
    it('clean payloads: 200 with valid rows (the baseline of the edits below)', async () => {
      const quotes = await baseline(spec, 'quotes');
      expectAnswer(quotes, 200);
      expect((quotes.body.data as Array<{ symbol: string }>).map((q) => q.symbol)).toEqual([spec.symbol]);
      const candles = await baseline(spec, 'candles');
      expectAnswer(candles, 200);
      expect(bars(candles).timestamp.length).toBeGreaterThanOrEqual(5);
    });

    it.each(CASES.filter((c) => c.applies?.(spec) ?? true).map((c) => ({ ...c, label: `${c.route}: ${c.name}` })))('$label → $status $error', async (c) => {
      run++;
      const base = c.check ? await baseline(spec, c.route) : undefined;
      const { answer: got, vendor } = await answer(spec, c.route, c.fault);
      expectAnswer(got, c.status, c.error);
      c.check?.(got, base!, spec);
      if (c.name.startsWith('429')) {
        // Never retried inline.
        expect(vendor?.calls.filter((u) => spec.resourceOf(u) === ROUTE_RESOURCE[c.route])).toHaveLength(1);
      }
    });
  });
}
