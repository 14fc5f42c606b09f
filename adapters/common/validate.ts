// Boundary validation of vendor payloads, shared by the real-vendor adapters. A payload that is
// not what the parser expects becomes AppError UPSTREAM_BAD_RESPONSE here, never a TypeError or a
// NaN deeper in. Vendor text never goes into a message (DESIGN.md 4.6: no upstream messages on
// 5xx); `details` carries only the adapter id and the path that failed.

import { AppError } from '../../src/errors.ts';

export type JsonRecord = Record<string, unknown>;

export interface PayloadReader {
  readonly vendor: string;
  fail(path: string): never;
  json(text: string, path: string): unknown;
  record(value: unknown, path: string): JsonRecord;
  array(value: unknown, path: string): unknown[];
  /** A finite JSON number (a numeric string is a wrong type). */
  number(value: unknown, path: string): number;
  /** null, undefined, '' and '-' (Eastmoney's "no value") → null; anything else must be a finite number. */
  optionalNumber(value: unknown, path: string): number | null;
  /** A cell of a delimited text row (Eastmoney klines): '-' or '' → null, else a finite decimal. */
  cell(value: string, path: string): number | null;
  string(value: unknown, path: string): string;
  optionalString(value: unknown, path: string): string | null;
}

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function badResponse(vendor: string, path: string, cause?: unknown): AppError {
  return new AppError('UPSTREAM_BAD_RESPONSE', 'The upstream data source sent an unexpected response', {
    details: { adapter: vendor, path },
    cause,
  });
}


export function payloadReader(vendor: string): PayloadReader {
  const fail = (path: string): never => {
    throw badResponse(vendor, path);
  };
  return {
    vendor,
    fail,
    json(text, path) {
      try {
        return JSON.parse(text) as unknown;
      } catch (cause) {
        throw badResponse(vendor, path, cause);
      }
    },
    record(value, path) {
      return isRecord(value) ? value : fail(path);
    },
    array(value, path) {
      return Array.isArray(value) ? value : fail(path);
    },
    number(value, path) {
      return typeof value === 'number' && Number.isFinite(value) ? value : fail(path);
    },
    optionalNumber(value, path) {
      if (value === null || value === undefined || value === '' || value === '-') return null;
      return typeof value === 'number' && Number.isFinite(value) ? value : fail(path);
    },
    cell(value, path) {
      const text = value.trim();
      if (text === '' || text === '-') return null;
      const n = Number(text);
      return Number.isFinite(n) ? n : fail(path);
    },
    string(value, path) {
      return typeof value === 'string' ? value : fail(path);
    },
    optionalString(value, path) {
      if (value === null || value === undefined) return null;
      return typeof value === 'string' ? value : fail(path);
    },
  };
}

/** Runs `work` over `items` with at most `limit` in flight; results keep input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    // After one failure the whole call fails, so the other lanes stop taking new items.
    while (next < items.length && !failed) {
      const i = next++;
      try {
        out[i] = await work(items[i]);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  });
  await Promise.all(lanes);
  return out;
}
