// Latency and fault injection for tests and benchmarks. Both draw from seeded generators advanced
// once per call, so a given seed yields the same sequence of delays and failures in every run.
// Waiting always honours the caller's deadline signal.

import { AppError } from '../../src/errors.ts';
import { createRng, type Rng } from './random.ts';

export interface LatencyOptions {
  /** Added to every call, ms. */
  fixedMs?: number;
  /** Uniformly random extra, ms, in [0, randomMs). */
  randomMs?: number;
}

export interface FaultOptions {
  /** Fraction of calls failing with UPSTREAM_ERROR. */
  errorRate?: number;
  /** Fraction of calls that hang for `timeoutMs` and then fail with UPSTREAM_TIMEOUT. */
  timeoutRate?: number;
  /** Fraction of calls failing with UPSTREAM_BAD_RESPONSE, as if the vendor body were garbage. */
  malformedRate?: number;
  /**
   * Fraction of calls whose answer carries one malformed row (a negative price, a non-finite
   * value, a repeated stamp or symbol, a negative volume), as a misbehaving vendor would send.
   * The adapter boundary checks drop it: it exercises validation, it is never served.
   */
  invalidRowRate?: number;
  /** Seed of the fault sequence; default 1. */
  seed?: number;
  /** How long a simulated timeout hangs before failing, ms; default 1000. */
  timeoutMs?: number;
}

export type Corruption = 'negative_price' | 'non_finite' | 'duplicate' | 'negative_volume';
export const CORRUPTIONS: readonly Corruption[] = ['negative_price', 'non_finite', 'duplicate', 'negative_volume'];

export interface FaultInjector {
  /** Resolves when the call may proceed; rejects with the injected failure. undefined: no wait. */
  before(signal?: AbortSignal): Promise<void> | undefined;
  /** Which malformed row this call's answer carries, if any (one draw per call). */
  corruption(): Corruption | undefined;
}

const DEFAULT_TIMEOUT_MS = 1000;

function aborted(signal: AbortSignal): AppError {
  return new AppError('UPSTREAM_TIMEOUT', 'sim: call aborted by its deadline', { cause: signal.reason });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(aborted(signal));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(aborted(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function rate(value: number | undefined): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value as number)) : 0;
}

export function createFaultInjector(latency: LatencyOptions = {}, faults: FaultOptions = {}): FaultInjector {
  const fixedMs = Math.max(0, latency.fixedMs ?? 0);
  const randomMs = Math.max(0, latency.randomMs ?? 0);
  const errorRate = rate(faults.errorRate);
  const timeoutRate = rate(faults.timeoutRate);
  const malformedRate = rate(faults.malformedRate);
  const timeoutMs = Math.max(0, faults.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const seed = faults.seed ?? 1;
  // Separate streams: turning latency on does not change which calls fail.
  const faultRng: Rng = createRng(seed);
  const latencyRng: Rng = createRng(seed ^ 0x5bd1e995);
  // Its own stream too: switching invalid rows on leaves the failure sequence as it was.
  const rowRng: Rng = createRng(seed ^ 0x2545f491);
  const invalidRowRate = rate(faults.invalidRowRate);
  const idle = fixedMs === 0 && randomMs === 0 && errorRate === 0 && timeoutRate === 0 && malformedRate === 0;

  const run = async (roll: number, delay: number, signal?: AbortSignal): Promise<void> => {
    if (delay > 0) await sleep(delay, signal);
    if (roll < errorRate) throw new AppError('UPSTREAM_ERROR', 'sim: injected upstream error');
    if (roll < errorRate + timeoutRate) {
      await sleep(timeoutMs, signal);
      throw new AppError('UPSTREAM_TIMEOUT', 'sim: injected upstream timeout');
    }
    if (roll < errorRate + timeoutRate + malformedRate) {
      throw new AppError('UPSTREAM_BAD_RESPONSE', 'sim: injected malformed response');
    }
  };

  return {
    before(signal) {
      if (signal?.aborted) return Promise.reject(aborted(signal));
      if (idle) return undefined;
      // Both draws happen on every call so the sequences stay aligned call by call.
      const roll = faultRng.next();
      const delay = fixedMs + latencyRng.next() * randomMs;
      return run(roll, delay, signal);
    },
    corruption() {
      if (invalidRowRate === 0) return undefined;
      const roll = rowRng.next();
      const kind = rowRng.next();
      return roll < invalidRowRate ? CORRUPTIONS[Math.floor(kind * CORRUPTIONS.length) % CORRUPTIONS.length] : undefined;
    },
  };
}
