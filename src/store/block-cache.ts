// The store's hot blocks in memory (issue 30): per series, the coverage and the verified blocks of
// the store-hit reads (candle-store.ts #stored), bounded by bytes (least recently used series go first),
// so a window over a hot series needs no statement at all (on PostgreSQL, no round trip).
//
// Consistency: an entry is one coverage snapshot and blocks read under that very coverage. A read
// whose coverage equals the entry's adds its blocks to it (a covered range's bars do not change
// while its coverage does not: fills, drops, retention and re-fetches all change the coverage in
// the same transaction as the bars); a read with other coverage replaces the entry whole. Entries
// live at most `ttlMs` (another process may drop or prune a shared store: its drop is seen within
// that time, like the memory tier's windows), and this process's own writes to a series drop its
// entry. Blocks are held as read (their bytes, checksum verified once when read).
import { LRUCache } from 'lru-cache';
import type { BasePeriod } from '../domain.ts';
import { blockOf } from './blocks.ts';
import type { Interval, Segment } from './coverage.ts';

/** Bytes charged per series entry beyond its blocks (maps, the coverage, the key). */
const ENTRY_OVERHEAD_BYTES = 512;
/** Bytes charged per block beyond its data (the map slot, the Uint8Array object). */
const BLOCK_OVERHEAD_BYTES = 96;

interface Entry {
  coverage: Segment[];
  /** Blocks read, by block number. */
  blocks: Map<number, Uint8Array>;
  /** Block ranges whose every block is known: held in `blocks`, or absent from the store. */
  known: Interval[];
  at: number;
  bytes: number;
}

export interface BlockCacheOptions {
  maxBytes: number;
  ttlMs: number;
}

function sameCoverage(a: readonly Segment[], b: readonly Segment[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i].lo !== b[i].lo || a[i].hi !== b[i].hi || a[i].recheckAt !== b[i].recheckAt) return false;
  return true;
}

/** `known` with [lo, hi] added, merged (adjacent block numbers join). */
function addKnown(known: readonly Interval[], lo: number, hi: number): Interval[] {
  const all = [...known, { lo, hi }].sort((x, y) => x.lo - y.lo);
  const out: Interval[] = [];
  for (const k of all) {
    const last = out[out.length - 1];
    if (last !== undefined && k.lo <= last.hi + 1) last.hi = Math.max(last.hi, k.hi);
    else out.push({ ...k });
  }
  return out;
}

export class BlockCache {
  readonly #lru: LRUCache<string, Entry> | undefined;
  readonly #ttlMs: number;

  constructor(options: BlockCacheOptions) {
    this.#ttlMs = options.ttlMs;
    this.#lru = options.maxBytes > 0
      ? new LRUCache<string, Entry>({ maxSize: options.maxBytes, sizeCalculation: (e, key) => Math.max(1, e.bytes + 2 * key.length) })
      : undefined;
  }

  /** Bytes held (for tests and the benchmark). */
  get bytes(): number {
    return this.#lru?.calculatedSize ?? 0;
  }

  /**
   * The series' coverage and its blocks for labels in [lo, hi] (ascending), when the entry is
   * younger than the TTL and knows every block of that range; else undefined.
   */
  get(series: string, period: BasePeriod, lo: number, hi: number, now: number): { coverage: Segment[]; blobs: Uint8Array[] } | undefined {
    const entry = this.#lru?.get(series);
    if (entry === undefined) return undefined;
    if (now - entry.at > this.#ttlMs || now < entry.at) {
      this.#lru!.delete(series);
      return undefined;
    }
    const bl = blockOf(period, lo);
    const bh = blockOf(period, hi);
    if (!entry.known.some((k) => k.lo <= bl && bh <= k.hi)) return undefined;
    const picked: [number, Uint8Array][] = [];
    for (const pair of entry.blocks) if (pair[0] >= bl && pair[0] <= bh) picked.push(pair);
    picked.sort((x, y) => x[0] - y[0]);
    return { coverage: entry.coverage, blobs: picked.map((p) => p[1]) };
  }

  /** A store-hit read of blocks blockOf(lo)…blockOf(hi) (those listed; the rest absent), verified. */
  put(series: string, period: BasePeriod, lo: number, hi: number, coverage: Segment[], blocks: readonly { block: number; data: Uint8Array }[], now: number): void {
    if (this.#lru === undefined) return;
    const old = this.#lru.peek(series);
    const keep = old !== undefined && now - old.at <= this.#ttlMs && now >= old.at && sameCoverage(old.coverage, coverage);
    const entry: Entry = keep
      ? { coverage: old.coverage, blocks: old.blocks, known: old.known, at: old.at, bytes: old.bytes }
      : { coverage, blocks: new Map(), known: [], at: now, bytes: ENTRY_OVERHEAD_BYTES + 32 * coverage.length };
    for (const { block, data } of blocks) {
      const held = entry.blocks.get(block);
      if (held !== undefined) entry.bytes -= held.byteLength + BLOCK_OVERHEAD_BYTES;
      entry.blocks.set(block, data);
      entry.bytes += data.byteLength + BLOCK_OVERHEAD_BYTES;
    }
    entry.known = addKnown(entry.known, blockOf(period, lo), blockOf(period, hi));
    this.#lru.set(series, entry);
  }

  /** This process wrote to the series (a fill): its entry goes. */
  forget(series: string): void {
    this.#lru?.delete(series);
  }

  clear(): void {
    this.#lru?.clear();
  }
}
