// Seeded randomness for the simulated market. Every draw is a pure function of its seed, so the
// same (symbol, date, purpose) gives the same number on every run and machine; Math.random is
// never used. Integer maths stays in 32 bits (Math.imul) so results do not depend on the engine.

/** FNV-1a over UTF-16 code units, then a murmur3 finaliser for avalanche. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

/** murmur3's 32-bit finaliser: every input bit affects every output bit. */
function fmix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Combines 32-bit parts into one seed (order matters). */
function mixSeed(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) h = fmix32(Math.imul(h ^ (part | 0), 0x27d4eb2d) + 0x165667b1);
  return h >>> 0;
}

/** mixSeed(a, b, c) without a rest array, for per-bar seeds on hot loops (same value). */
export function mixSeed3(a: number, b: number, c: number): number {
  let h = 0x9e3779b9;
  h = fmix32(Math.imul(h ^ (a | 0), 0x27d4eb2d) + 0x165667b1);
  h = fmix32(Math.imul(h ^ (b | 0), 0x27d4eb2d) + 0x165667b1);
  h = fmix32(Math.imul(h ^ (c | 0), 0x27d4eb2d) + 0x165667b1);
  return h >>> 0;
}

/** A seed from any mix of strings and integers, e.g. seedOf('600519.SH', dayNumber, 'daily'). */
export function seedOf(...parts: (string | number)[]): number {
  return mixSeed(...parts.map((part) => (typeof part === 'string' ? hashString(part) : part)));
}

export interface Rng {
  /** Restarts the sequence from a new seed (reuses the generator on hot loops). */
  reseed(seed: number): void;
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform in [min, max). */
  range(min: number, max: number): number;
  /** Uniform integer in [min, max] inclusive. */
  int(min: number, max: number): number;
  /** Standard normal (Box–Muller). */
  normal(): number;
  /** True with probability p. */
  chance(p: number): boolean;
  /**
   * out[i] = kinds[i] === DRAW_NORMAL ? normal() : next(), in order: the same values as those calls,
   * in one call whose results stay unboxed (a double returned from a call that is not inlined is
   * a heap number: the daily walk's nine draws a bar were half its garbage).
   */
  fill(out: Float64Array, kinds: Uint8Array): void;
}

/** fill()'s kinds: a uniform in [0, 1) (next) or a standard normal (normal). */
export const DRAW_NEXT = 0;
export const DRAW_NORMAL = 1;

/**
 * mulberry32: tiny, fast, good enough for simulation (not for cryptography). A class rather than
 * closures: its state lives in fields the optimiser keeps in registers on hot loops.
 */
class Mulberry32 implements Rng {
  // The state as an int32 (a Smi): as a uint32 above 2^31 it would be a heap number, allocated on
  // every draw. The arithmetic below takes the same low 32 bits either way.
  state: number;
  // Box–Muller yields two normals per pair of uniforms; the second is kept for the next call as
  // its radius and angle, and its sine only taken if it is drawn (many callers never draw it).
  // Kept in a Float64Array: a double stored in a field is a fresh heap number each time.
  hasSpare = false;
  readonly spare = new Float64Array(2);

  constructor(seed: number) {
    this.state = seed | 0;
  }

  reseed(value: number): void {
    this.state = value | 0;
    this.hasSpare = false;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  range(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  normal(): number {
    const spare = this.spare;
    if (this.hasSpare) {
      this.hasSpare = false;
      return spare[0] * Math.sin(spare[1]);
    }
    // 1 - u keeps the logarithm's argument in (0, 1].
    const radius = Math.sqrt(-2 * Math.log(1 - this.next()));
    const angle = 2 * Math.PI * this.next();
    spare[0] = radius;
    spare[1] = angle;
    this.hasSpare = true;
    return radius * Math.cos(angle);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  fill(out: Float64Array, kinds: Uint8Array): void {
    for (let i = 0; i < kinds.length; i++) out[i] = kinds[i] === DRAW_NORMAL ? this.normal() : this.next();
  }
}

export function createRng(seed: number): Rng {
  return new Mulberry32(seed);
}

/** Shorthand for a one-off generator: rngFor('AAPL.US', 20240, 'gap'). */
export function rngFor(...parts: (string | number)[]): Rng {
  return createRng(seedOf(...parts));
}
