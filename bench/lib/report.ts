// The headline figures a suite hands to `npm run bench` (bench/run.ts): with BENCH_REPORT=<file>
// set, each suite appends its rows there as JSON lines; run alone, a suite prints its own tables
// and this does nothing. BENCH_QUICK=1 asks every suite for its smoke size (seconds, not minutes):
// figures from a quick run only show that the suite works.
import { appendFileSync } from 'node:fs';

export interface Headline {
  suite: string;
  /** What is measured, e.g. "quote, pipelining 1: service (info) ÷ bare, req/s". */
  figure: string;
  value: string;
  /** e.g. "≥ 0.90"; empty when the figure is recorded, not judged. */
  target?: string;
  pass?: boolean;
}

export const QUICK = process.env.BENCH_QUICK === '1';

export function reportHeadlines(rows: Headline[]): void {
  const file = process.env.BENCH_REPORT;
  if (file === undefined || file === '') return;
  appendFileSync(file, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
}

/** A positive number from the environment, else `fallback` (`quick` under BENCH_QUICK=1). */
export function envNumber(name: string, fallback: number, quick = fallback): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : QUICK ? quick : fallback;
}
