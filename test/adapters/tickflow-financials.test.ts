// TickFlow financials pass-through (issue 25): the request as the official client's route takes it
// and the record-by-record validation of the answer, input to output (the records are the 02367.HK
// capture in TickFlow's shape: mocks/fixtures/README.md), including the no-data shapes.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildFinancialsRequest, parseFinancials } from '../../adapters/tickflow/financials.ts';
import { payloadReader, rowCheck } from '../../adapters/common/validate.ts';
import type { InvalidRowsEvent } from '../../adapters/types.ts';
import { AppError } from '../../src/errors.ts';
import { ref } from './helpers.ts';

const r = payloadReader('tickflow');
const data = (name: string) => (JSON.parse(readFileSync(new URL(`../../mocks/fixtures/tickflow/${name}`, import.meta.url), 'utf8')) as { data: Record<string, unknown[]> }).data;
const HK = ref('02367.HK');
const refs = new Map([[HK.symbol, HK], ['600519.SH', ref('600519.SH')]]);

function parse(statement: Parameters<typeof parseFinancials>[0], payload: unknown) {
  const events: InvalidRowsEvent[] = [];
  const out = parseFinancials(statement, payload, refs, r, (symbol) => rowCheck('tickflow', (e) => events.push(e), 'financialsIncome', symbol));
  return { out, events };
}

describe('tickflow financials', () => {
  it('GET /v1/financials/<route> with the comma list and x-api-key, nothing else', () => {
    const req = buildFinancialsRequest({ baseUrl: 'https://api.tickflow.org/', apiKey: 'k' }, 'balance_sheet', ['02367.HK', '600519.SH']);
    expect(req.url).toBe('https://api.tickflow.org/v1/financials/balance-sheet?symbols=02367.HK%2C600519.SH');
    expect(req.headers).toEqual({ accept: 'application/json', 'x-api-key': 'k' });
    expect(req.resource).toBe('financialsBalanceSheet');
  });

  it('passes valid records through ascending, the statement\'s fields only', () => {
    const payload = data('financials-metrics-ok.json');
    const shuffled = { '02367.HK': [...payload['02367.HK']].reverse().map((x) => ({ ...(x as object), pe_ratio: 30 })) };
    const { out, events } = parse('metrics', shuffled);
    const series = out.get('02367.HK')!;
    expect(series.map((x) => x.period_end)).toEqual((payload['02367.HK'] as { period_end: string }[]).map((x) => x.period_end));
    expect(series.at(-1)).toEqual(payload['02367.HK'].at(-1));
    expect(events).toEqual([]);
  });

  it('drops an invalid record (counted), rejects a symbol whose every record is invalid, leaves out [] and null', () => {
    const good = data('financials-income-ok.json')['02367.HK'];
    const { out, events } = parse('income', {
      '02367.HK': [...good, { period_end: '2025-02-30', revenue: 1 }, { period_end: '2025-12-31', announce_date: 'soon' }],
      '600519.SH': [{ period_end: 'x' }],
    });
    expect(out.get('02367.HK')).toHaveLength(good.length);
    expect(out.has('600519.SH')).toBe(false);
    expect(out.rejected).toEqual(new Set(['600519.SH']));
    expect(events.map((e) => e.reason).sort()).toEqual(['invalid_announce_date', 'invalid_period_end', 'invalid_period_end']);
    const empty = parse('income', { '02367.HK': [], '600519.SH': null, 'NOT-ASKED.US': good });
    expect(empty.out.size).toBe(0);
    expect(empty.out.rejected).toBeUndefined();
  });

  it('a string where a number belongs fails the payload; a non-finite number drops the record', () => {
    expect(() => parse('income', { '02367.HK': [{ period_end: '2024-12-31', revenue: '5538812000' }] })).toThrow(AppError);
    const { out, events } = parse('income', { '02367.HK': [{ period_end: '2024-12-31', revenue: 1e999 }, { period_end: '2023-12-31', revenue: 1 }] });
    expect(out.get('02367.HK')).toEqual([{ period_end: '2023-12-31', announce_date: null, revenue: 1 }]);
    expect(events.map((e) => e.reason)).toEqual(['invalid_value']);
  });
});
