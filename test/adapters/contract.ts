// The shared adapter contract (docs/contract.md, docs/architecture.md#adapters): invariants every adapter's output must
// hold, whatever the vendor. Call it from an adapter's test file (inside whatever msw setup the
// adapter needs).
//
//   runAdapterContract(name, makeAdapter, symbols)
//     symbols: SymbolRef[] (used for everything), or ContractSymbols to say which symbols the
//     fixtures can answer per resource.
//
// Capabilities are checked before anything else and nothing is skipped silently: every resource
// must be declared `true` or `false` explicitly, an adapter must serve quotes or candles, a
// declared resource must answer valid shapes, and an undeclared one is the router's to skip
// (declared `false` here, never called). contractCases() exposes the same cases as plain
// functions so a test can prove the suite fails for a bad adapter (contract.test.ts).

import { describe, expect, it } from 'vitest';
import type { Adapter, AdapterCapabilities, Resource } from '../../adapters/types.ts';
import type { Candles, Depth, ExFactor, Instrument, PoolId, Quote, SymbolRef } from '../../src/domain.ts';
import { POOL_IDS } from '../../src/domain.ts';
import { localDate, localMidnight, minuteBarLabelFor } from '../../src/markets/calendar.ts';
import { RESOURCES } from '../../src/data/resources/index.ts';
import { compareRecords } from '../../src/financials/select.ts';
import { FINANCIALS_RESOURCES, PERIOD_MONTHS, STATEMENT_FIELDS, type Statement, type StatementRecord } from '../../src/financials/types.ts';

export interface ContractSymbols {
  /** Symbols the batch resources (quotes, depth, instruments, ex-factors) can answer. */
  batch: SymbolRef[];
  /** Symbols with daily and 1m candles and an intraday session; default `batch`. */
  candles?: SymbolRef[];
  /** Symbols for ex-factors; default `batch`. */
  exFactors?: SymbolRef[];
  /** Symbols with statements, for every statement the adapter declares; default `batch`. */
  financials?: SymbolRef[];
  /** A symbol the adapter does not know: omitted from batches, undefined from candles. */
  unknown?: SymbolRef;
  /** Pools to list when the adapter serves pools; default all. */
  pools?: PoolId[];
}

const EXT_TYPES = { CN: 'cn_equity', HK: 'hk_equity', US: 'us_equity' } as const;

function finite(values: number[], what: string): void {
  for (const v of values) expect(Number.isFinite(v), `${what} finite`).toBe(true);
}

export function checkQuote(q: Quote, ref: SymbolRef): void {
  expect(q.symbol).toBe(ref.symbol);
  expect(q.region).toBe(ref.region);
  finite([q.last_price, q.open, q.high, q.low, q.prev_close, q.amount, q.ext.amplitude, q.ext.change_amount, q.ext.change_pct], q.symbol);
  for (const p of [q.last_price, q.open, q.high, q.low, q.prev_close]) expect(p, `${q.symbol} positive prices`).toBeGreaterThan(0);
  expect(Number.isInteger(q.volume) && q.volume >= 0, `${q.symbol} integer volume`).toBe(true);
  expect(q.amount).toBeGreaterThanOrEqual(0);
  expect(Number.isInteger(q.timestamp) && q.timestamp > 0).toBe(true);
  expect(q.low).toBeLessThanOrEqual(q.high);
  if (q.volume > 0) {
    for (const p of [q.open, q.last_price]) {
      expect(p).toBeGreaterThanOrEqual(q.low);
      expect(p).toBeLessThanOrEqual(q.high);
    }
  }
  expect(q.ext.type).toBe(EXT_TYPES[ref.region]);
  expect(typeof q.ext.name).toBe('string');
  if (q.ext.turnover_rate !== null) expect(Number.isFinite(q.ext.turnover_rate)).toBe(true);
  // Ratios are fractions: a 150% daily move is not a quote, it is a percent left unconverted.
  expect(Math.abs(q.ext.change_pct)).toBeLessThan(1.5);
}

export function checkDepth(d: Depth, ref: SymbolRef): void {
  expect(d.symbol).toBe(ref.symbol);
  expect(d.region).toBe(ref.region);
  expect(Number.isInteger(d.timestamp) && d.timestamp > 0).toBe(true);
  expect(d.bid_volumes.length).toBe(d.bid_prices.length);
  expect(d.ask_volumes.length).toBe(d.ask_prices.length);
  expect(d.bid_prices.length).toBeLessThanOrEqual(5);
  expect(d.ask_prices.length).toBeLessThanOrEqual(5);
  for (let i = 1; i < d.bid_prices.length; i++) expect(d.bid_prices[i]).toBeLessThan(d.bid_prices[i - 1]);
  for (let i = 1; i < d.ask_prices.length; i++) expect(d.ask_prices[i]).toBeGreaterThan(d.ask_prices[i - 1]);
  for (const v of [...d.bid_volumes, ...d.ask_volumes]) expect(Number.isInteger(v) && v > 0, 'depth volume').toBe(true);
  for (const p of [...d.bid_prices, ...d.ask_prices]) expect(p).toBeGreaterThan(0);
  if (d.bid_prices.length > 0 && d.ask_prices.length > 0) expect(d.bid_prices[0]).toBeLessThan(d.ask_prices[0]);
}

export function checkCandles(c: Candles, ref: SymbolRef, period: '1d' | '1m'): void {
  const n = c.timestamp.length;
  for (const col of [c.open, c.high, c.low, c.close, c.volume, c.amount]) expect(col.length).toBe(n);
  if (c.prev_close !== undefined) expect(c.prev_close.length).toBe(n);
  for (let i = 0; i < n; i++) {
    const t = c.timestamp[i];
    if (i > 0) expect(t, 'strictly ascending').toBeGreaterThan(c.timestamp[i - 1]);
    finite([c.open[i], c.high[i], c.low[i], c.close[i], c.amount[i]], `bar ${i}`);
    expect(c.low[i]).toBeLessThanOrEqual(Math.min(c.open[i], c.close[i]));
    expect(c.high[i]).toBeGreaterThanOrEqual(Math.max(c.open[i], c.close[i]));
    expect(c.low[i]).toBeGreaterThan(0);
    expect(Number.isInteger(c.volume[i]) && c.volume[i] >= 0, 'integer volume').toBe(true);
    if (period === '1d') {
      expect(t, 'daily bar at local midnight').toBe(localMidnight(ref.region, localDate(ref.region, t)));
    } else {
      expect(t % 60_000, 'minute boundary').toBe(0);
      expect(minuteBarLabelFor(ref.region, t, 1), 'a session minute label').toBe(t);
    }
  }
}

export function checkExFactors(events: ExFactor[], ref: SymbolRef): void {
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    if (i > 0) expect(e.timestamp).toBeGreaterThan(events[i - 1].timestamp);
    expect(e.timestamp).toBe(localMidnight(ref.region, localDate(ref.region, e.timestamp)));
    expect(Number.isFinite(e.ex_factor) && e.ex_factor > 0).toBe(true);
  }
}

export function checkInstrument(i: Instrument, ref: SymbolRef): void {
  expect(i.symbol).toBe(ref.symbol);
  expect(i.code).toBe(ref.code);
  expect(i.exchange).toBe(ref.exchange);
  expect(i.region).toBe(ref.region);
  expect(['stock', 'etf', 'index', 'bond', 'fund', 'futures', 'options', 'other']).toContain(i.type);
  expect(i.ext.type).toBe(EXT_TYPES[ref.region]);
  expect(i.ext.tick_size).toBeGreaterThan(0);
  if (i.ext.lot_size !== undefined) expect(Number.isInteger(i.ext.lot_size) && i.ext.lot_size > 0, 'lot size').toBe(true);
  if (i.ext.listing_date !== null) expect(i.ext.listing_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
}

function normalise(symbols: SymbolRef[] | ContractSymbols): Required<Omit<ContractSymbols, 'unknown'>> & Pick<ContractSymbols, 'unknown'> {
  if (Array.isArray(symbols)) return { batch: symbols, candles: symbols, exFactors: symbols, financials: symbols, pools: [...POOL_IDS] };
  return {
    batch: symbols.batch,
    candles: symbols.candles ?? symbols.batch,
    exFactors: symbols.exFactors ?? symbols.batch,
    financials: symbols.financials ?? symbols.batch,
    pools: symbols.pools ?? [...POOL_IDS],
    unknown: symbols.unknown,
  };
}

export { RESOURCES };

/** The statements' resources (src/data/resources/financials.ts), each checked alike. */
const STATEMENT_RESOURCES = Object.entries(FINANCIALS_RESOURCES) as [Statement, Resource][];
// Plan markets an adapter may serve: the three regions and China futures (a market of region CN).
const REGIONS = ['CN', 'HK', 'US', 'CN_FUTURES'];

/**
 * Capabilities as data, complete and coherent: every resource and base period declared `true` or
 * `false` (a missing key is not "false"), quotes or candles served, candles with at least one
 * native period, `resourceMarkets` narrowing only declared resources to declared markets.
 */
export function checkCapabilities(caps: AdapterCapabilities): void {
  expect(Object.keys(caps.resources).sort(), 'resources declares exactly the known resources').toEqual([...RESOURCES].sort());
  for (const r of RESOURCES) expect(caps.resources[r] === true || caps.resources[r] === false, `resources.${r} is explicitly true or false`).toBe(true);
  expect(caps.resources.quotes || caps.resources.candles, 'declares at least quotes or candles').toBe(true);
  for (const p of ['1m', '1d'] as const) expect(caps.periods[p] === true || caps.periods[p] === false, `periods.${p} explicit`).toBe(true);
  if (caps.resources.candles || caps.resources.intraday) expect(caps.periods['1m'] || caps.periods['1d'], 'a native base period').toBe(true);
  if (caps.resources.intraday) expect(caps.periods['1m'], 'intraday needs native 1m').toBe(true);
  expect(Number.isInteger(caps.maxBatch) && caps.maxBatch >= 1, 'maxBatch').toBe(true);
  expect(caps.markets.length, 'at least one market').toBeGreaterThan(0);
  for (const m of caps.markets) expect(REGIONS).toContain(m);
  expect(new Set(caps.markets).size).toBe(caps.markets.length);
  expect(typeof caps.rawPrices).toBe('boolean');
  expect(typeof caps.amount).toBe('boolean');
  for (const [r, markets] of Object.entries(caps.resourceMarkets ?? {})) {
    expect(RESOURCES, `resourceMarkets.${r} names a resource`).toContain(r);
    expect(caps.resources[r as Resource], `resourceMarkets.${r} narrows a declared resource`).toBe(true);
    expect((markets ?? []).length, `resourceMarkets.${r} is not empty`).toBeGreaterThan(0);
    for (const m of markets ?? []) expect(caps.markets, `resourceMarkets.${r} within markets`).toContain(m);
  }
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** One symbol's series of one statement: ascending, dated, the statement's fields only, finite or null. */
export function checkStatementSeries(statement: Statement, series: readonly StatementRecord<Statement>[]): void {
  expect(series.length, `${statement}: a present symbol has records`).toBeGreaterThan(0);
  const allowed = new Set<string>(['period_end', 'announce_date', 'currency', 'period_months', ...STATEMENT_FIELDS[statement]]);
  series.forEach((record, i) => {
    expect(record.period_end).toMatch(DATE);
    if (record.announce_date !== null) {
      expect(record.announce_date).toMatch(DATE);
      expect(record.announce_date >= record.period_end || statement === 'shares', `${statement}: announced after the period`).toBe(true);
    }
    if (record.period_months !== undefined && record.period_months !== null) expect(PERIOD_MONTHS).toContain(record.period_months);
    if (record.currency !== undefined && record.currency !== null) expect(record.currency).toMatch(/^[A-Z]{3}$/);
    for (const [field, value] of Object.entries(record)) {
      expect(allowed.has(field), `${statement}.${field} is a field of the record`).toBe(true);
      if (STATEMENT_FIELDS[statement].includes(field as never) && value !== null) expect(Number.isFinite(value), `${statement}.${field} finite`).toBe(true);
    }
    if (i > 0) expect(compareRecords(series[i - 1], record) <= 0, `${statement}: ascending`).toBe(true);
  });
}

export interface ContractCase {
  name: string;
  run(): Promise<void>;
}

/** The contract as named cases (what runAdapterContract registers with `it`). */
export function contractCases(makeAdapter: () => Adapter | Promise<Adapter>, symbols: SymbolRef[] | ContractSymbols): ContractCase[] {
  const s = normalise(symbols);
  const refOf = (key: string, pool: SymbolRef[]) => {
    const ref = pool.find((r) => r.symbol === key);
    expect(ref, `unexpected key ${key}`).toBeDefined();
    return ref as SymbolRef;
  };
  /** A resource's case: the adapter must have declared it one way or the other. */
  const declared = async (r: Resource): Promise<Adapter | undefined> => {
    const a = await makeAdapter();
    const flag = a.capabilities.resources[r];
    expect(flag === true || flag === false, `resources.${r} is explicitly true or false`).toBe(true);
    return flag ? a : undefined;
  };
  const cases: ContractCase[] = [];
  const it = (name: string, run: () => Promise<void>) => cases.push({ name, run });

  {
    it('declares its capabilities as data', async () => {
      const a = await makeAdapter();
      checkCapabilities(a.capabilities);
      expect(typeof a.id).toBe('string');
      expect(typeof a.label).toBe('string');
    });

    it('quotes', async () => {
      const a = await declared('quotes');
      if (a === undefined) return;
      const asked = s.unknown ? [...s.batch, s.unknown] : s.batch;
      const quotes = await a.getQuotes!(asked);
      expect(quotes.size).toBeGreaterThan(0);
      if (s.unknown) expect(quotes.has(s.unknown.symbol)).toBe(false);
      for (const [key, q] of quotes) checkQuote(q, refOf(key, s.batch));
      if (!a.capabilities.amount) for (const q of quotes.values()) expect(q.amount).toBe(0);
    });

    it('depth', async () => {
      const a = await declared('depth');
      if (a === undefined) return;
      const depth = await a.getDepth!(s.batch);
      expect(depth.size).toBeGreaterThan(0);
      for (const [key, d] of depth) checkDepth(d, refOf(key, s.batch));
    });

    it('candles (1d, 1m): shape, order, envelopes, labels, windows', async () => {
      const a = await declared('candles');
      if (a === undefined) return;
      let periods = 0;
      for (const ref of s.candles) {
        for (const period of ['1d', '1m'] as const) {
          if (!a.capabilities.periods[period]) continue;
          periods++;
          const all = await a.getCandles!({ symbol: ref, period, count: 50 });
          expect(all, `${ref.symbol} ${period}`).toBeDefined();
          checkCandles(all as Candles, ref, period);
          const n = (all as Candles).timestamp.length;
          expect(n).toBeGreaterThan(2);
          expect(n).toBeLessThanOrEqual(50);
          const few = await a.getCandles!({ symbol: ref, period, count: 2 });
          expect(few?.timestamp).toEqual((all as Candles).timestamp.slice(-2));
          const ts = (all as Candles).timestamp;
          const inner = await a.getCandles!({ symbol: ref, period, start: ts[1], end: ts[n - 2] });
          expect(inner?.timestamp).toEqual(ts.slice(1, n - 1));
        }
      }
      expect(periods, 'candles checked in at least one declared period').toBeGreaterThan(0);
      if (s.unknown) expect(await a.getCandles!({ symbol: s.unknown, period: '1d' })).toBeUndefined();
    });

    it('intraday', async () => {
      const a = await declared('intraday');
      if (a === undefined) return;
      for (const ref of s.candles) {
        const c = await a.getIntraday!(ref);
        expect(c, ref.symbol).toBeDefined();
        checkCandles(c as Candles, ref, '1m');
        expect(new Set((c as Candles).timestamp.map((t) => localDate(ref.region, t))).size).toBeLessThanOrEqual(1);
      }
    });

    it('ex-factors', async () => {
      const a = await declared('exFactors');
      if (a === undefined) return;
      const factors = await a.getExFactors!(s.exFactors);
      expect(factors.size).toBeGreaterThan(0);
      for (const [key, events] of factors) checkExFactors(events, refOf(key, s.exFactors));
    });

    it('financial statements: every declared statement, its series ascending, the client\'s fields, valid dates and spans', async () => {
      const a = await makeAdapter();
      let served = 0;
      for (const [statement, resource] of STATEMENT_RESOURCES) {
        const flag = a.capabilities.resources[resource];
        expect(flag === true || flag === false, `resources.${resource} is explicitly true or false`).toBe(true);
        if (!flag) continue;
        expect(typeof a.getFinancials, 'a declared statement has getFinancials').toBe('function');
        const markets = a.capabilities.resourceMarkets?.[resource] ?? a.capabilities.markets;
        const refs = s.financials.filter((r) => markets.includes(r.region));
        const asked = s.unknown ? [...refs, s.unknown] : refs;
        const found = await a.getFinancials!(asked, statement);
        if (s.unknown) expect(found.has(s.unknown.symbol), `${statement}: unknown symbol absent`).toBe(false);
        for (const [key, series] of found) {
          refOf(key, refs);
          checkStatementSeries(statement, series);
          served++;
        }
      }
      if (STATEMENT_RESOURCES.some(([, r]) => a.capabilities.resources[r])) expect(served, 'some statement answered').toBeGreaterThan(0);
    });

    it('instruments', async () => {
      const a = await declared('instruments');
      if (a === undefined) return;
      const found = await a.getInstruments!(s.batch);
      expect(found.size).toBeGreaterThan(0);
      for (const [key, i] of found) checkInstrument(i, refOf(key, s.batch));
    });

    it('pools', async () => {
      const a = await declared('pools');
      if (a === undefined) return;
      let listed = 0;
      for (const id of s.pools) {
        const pool = await a.listPool!(id);
        if (pool === undefined) continue;
        listed++;
        expect(pool.id).toBe(id);
        expect(pool.symbol_count).toBe(pool.symbols.length);
        expect(new Set(pool.symbols).size).toBe(pool.symbols.length);
        for (const sym of pool.symbols) expect(sym).toMatch(/^[A-Z0-9.-]+\.(SH|SZ|BJ|HK|US)$/);
      }
      expect(listed).toBeGreaterThan(0);
    });
  }
  return cases;
}

export function runAdapterContract(
  name: string, makeAdapter: () => Adapter | Promise<Adapter>, symbols: SymbolRef[] | ContractSymbols,
): void {
  describe(`adapter contract: ${name}`, () => {
    for (const c of contractCases(makeAdapter, symbols)) it(c.name, c.run);
  });
}
