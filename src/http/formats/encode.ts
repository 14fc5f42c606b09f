// The columnar encoders (issue 26): CSV written here (a header row, RFC 4180 quoting, epoch ms),
// Arrow IPC stream by the Apache Arrow project's own JavaScript implementation (`apache-arrow`),
// Parquet by parquet.ts (written here too, with node:zlib's ZSTD: it replaced parquet-wasm, whose
// WebAssembly module, compiled code and linear memory stayed resident for the life of the process:
// +14 MiB on the first answer, 5-13 MiB of linear memory after 200; issue 30 item 3). apache-arrow is
// imported on the first request that asks for Arrow or Parquet (a Parquet footer carries the Arrow
// schema), never at startup (startup time is measured; most deployments answer JSON only).
//
// Each encoder writes its answer once: CSV as row text in ~64 KiB pieces copied into one exact-size
// Buffer; Arrow as the columns' typed arrays (the only copy of the values) serialised by
// tableToIPC; Parquet page by page (headers and compressed bodies), joined once into an exact-size
// Buffer.
// The result is handed to the cache as it is (never copied again).
import type * as Arrow from 'apache-arrow';
import type { Format } from './negotiate.ts';
import { toParquet } from './parquet.ts';
import { dateCell, int64Cell, releaseBuffers, tableOf, type Chunk, type ColumnDef, type TableData, type TableKind } from './tables.ts';

type ArrowModule = typeof Arrow;

let arrowModule: Promise<ArrowModule> | undefined;

/** apache-arrow, imported once on first use. */
function arrow(): Promise<ArrowModule> {
  arrowModule ??= import('apache-arrow');
  return arrowModule;
}

/** Whether apache-arrow has been loaded (startup tests check that JSON never loads it). */
export function loadedEncoders(): { arrow: boolean } {
  return { arrow: arrowModule !== undefined };
}

/** The answer's bytes in `format` (not JSON: the response cache serialises JSON itself). */
export async function encodeTable(format: Exclude<Format, 'json'>, kind: TableKind, body: unknown): Promise<Buffer> {
  const table = tableOf(kind, body);
  if (format === 'csv') return toCsv(table);
  if (format === 'parquet') return toParquet(table, await arrowSchema(table.columns));
  return view(await toArrowIpc(table));
}

/** By the columns' names and types (what the schema is made of), not by the kind's name alone. */
const schemas = new Map<string, string>();

/**
 * The Arrow IPC schema message of a table kind (the first message of an empty table's IPC stream:
 * continuation marker, length, flatbuffer) in base64, which a Parquet footer carries as
 * `ARROW:schema` so that Arrow readers (pyarrow, polars, arrow-rs) get the dictionary and zone
 * types back. One per column set.
 */
async function arrowSchema(columns: readonly ColumnDef[]): Promise<string> {
  const key = columns.map((c) => `${c.name}:${c.type}`).join(',');
  let schema = schemas.get(key);
  if (schema === undefined) {
    const ipc = await toArrowIpc({ columns, chunks: [] });
    const length = new DataView(ipc.buffer, ipc.byteOffset, ipc.byteLength).getInt32(4, true);
    schema = Buffer.from(ipc.buffer, ipc.byteOffset, 8 + length).toString('base64');
    schemas.set(key, schema);
  }
  return schema;
}

/** A Buffer over the same memory (no copy). */
function view(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

// ---- CSV -------------------------------------------------------------------------------------

const NEEDS_QUOTES = /[",\r\n]/;

function csvText(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One cell as JSON would show the value (numbers as JSON.stringify writes them; null and NaN empty). */
function csvCell(type: ColumnDef['type'], value: unknown): string {
  switch (type) {
    case 'float64':
    case 'int64':
    case 'timestamp':
      return typeof value === 'number' && Number.isFinite(value) ? String(value) : '';
    case 'bool':
      return value === true ? 'true' : value === false ? 'false' : '';
    default:
      return csvText(value);
  }
}

const PIECE_CHARS = 65_536;

/**
 * Column `values` of one chunk as CSV cells. (JSON.stringify of a whole column split at its commas
 * measured the same as String(n) per cell: number formatting is the cost either way, ~75 ns a value.)
 */
function cellsOf(type: ColumnDef['type'], values: ArrayLike<unknown>, rows: number): string[] {
  const cells = new Array<string>(rows);
  for (let i = 0; i < rows; i++) cells[i] = csvCell(type, values[i]);
  return cells;
}

export function toCsv(table: TableData): Buffer {
  const pieces: string[] = [];
  let piece = table.columns.map((c) => csvText(c.name)).join(',') + '\n';
  const width = table.columns.length;
  for (const chunk of table.chunks) {
    // A constant column (a batch's symbol) is formatted once per chunk, the others column by column.
    const constants = chunk.values.map((v, c) => ('constant' in v ? csvCell(table.columns[c].type, v.constant) : undefined));
    const columns = chunk.values.map((v, c) => ('constant' in v ? undefined : cellsOf(table.columns[c].type, v as ArrayLike<unknown>, chunk.rows)));
    for (let row = 0; row < chunk.rows; row++) {
      let line = '';
      for (let c = 0; c < width; c++) {
        if (c > 0) line += ',';
        line += constants[c] ?? (columns[c] as string[])[row];
      }
      piece += line + '\n';
      if (piece.length >= PIECE_CHARS) {
        pieces.push(piece);
        piece = '';
      }
    }
  }
  pieces.push(piece);
  let bytes = 0;
  for (const p of pieces) bytes += Buffer.byteLength(p);
  const out = Buffer.allocUnsafeSlow(bytes);
  let offset = 0;
  for (let i = 0; i < pieces.length; i++) {
    offset += out.write(pieces[i], offset);
    pieces[i] = '';
  }
  return out;
}

// ---- Arrow -----------------------------------------------------------------------------------

/** Every value of column `c` across the chunks, in row order. */
function* cells(chunks: readonly Chunk[], c: number): Generator<unknown> {
  for (const chunk of chunks) {
    const source = chunk.values[c];
    if ('constant' in source) {
      for (let row = 0; row < chunk.rows; row++) yield source.constant;
    } else {
      for (let row = 0; row < chunk.rows; row++) yield (source as ArrayLike<unknown>)[row];
    }
  }
}

/** A validity bitmap (Arrow's LSB order) for `rows` values, with the null count. */
class Validity {
  readonly bits: Uint8Array;
  nulls = 0;
  constructor(rows: number) {
    this.bits = new Uint8Array(Math.ceil(rows / 8));
  }
  set(index: number, valid: boolean): void {
    if (valid) this.bits[index >> 3] |= 1 << (index & 7);
    else this.nulls += 1;
  }
}

function columnData(A: ArrowModule, def: ColumnDef, chunks: readonly Chunk[], c: number, rows: number, owned: ArrayBuffer[]): Arrow.Data {
  const validity = new Validity(rows);
  owned.push(validity.bits.buffer as ArrayBuffer);
  const nulls = () => (validity.nulls > 0 ? { nullBitmap: validity.bits, nullCount: validity.nulls } : {});
  let i = 0;
  switch (def.type) {
    case 'float64': {
      const data = new Float64Array(rows);
      owned.push(data.buffer);
      for (const v of cells(chunks, c)) {
        const ok = typeof v === 'number' && Number.isFinite(v);
        data[i] = ok ? v : 0;
        validity.set(i++, ok);
      }
      return A.makeData({ type: new A.Float64(), length: rows, data, ...nulls() });
    }
    case 'int64':
    case 'timestamp': {
      const data = new BigInt64Array(rows);
      owned.push(data.buffer);
      for (const v of cells(chunks, c)) {
        const n = int64Cell(v);
        data[i] = n !== undefined ? BigInt(n) : 0n;
        validity.set(i++, n !== undefined);
      }
      if (def.type === 'int64') return A.makeData({ type: new A.Int64(), length: rows, data, ...nulls() });
      return A.makeData({ type: new A.TimestampMillisecond('UTC'), length: rows, data, ...nulls() });
    }
    case 'symbol': {
      const indices = new Int32Array(rows);
      owned.push(indices.buffer);
      const positions = new Map<string, number>();
      const dictionary: string[] = [];
      for (const v of cells(chunks, c)) {
        const ok = typeof v === 'string';
        if (ok) {
          let at = positions.get(v);
          if (at === undefined) {
            at = dictionary.length;
            positions.set(v, at);
            dictionary.push(v);
          }
          indices[i] = at;
        }
        validity.set(i++, ok);
      }
      const type = new A.Dictionary(new A.Utf8(), new A.Int32());
      return A.makeData({ type, length: rows, data: indices, dictionary: A.vectorFromArray(dictionary, new A.Utf8()), ...nulls() });
    }
    case 'utf8': {
      const values: (string | null)[] = [];
      for (const v of cells(chunks, c)) values.push(typeof v === 'string' ? v : null);
      return A.vectorFromArray(values, new A.Utf8()).data[0];
    }
    case 'bool': {
      const data = new Uint8Array(Math.ceil(rows / 8));
      owned.push(data.buffer);
      for (const v of cells(chunks, c)) {
        const ok = typeof v === 'boolean';
        if (v === true) data[i >> 3] |= 1 << (i & 7);
        validity.set(i++, ok);
      }
      return A.makeData({ type: new A.Bool(), length: rows, data, ...nulls() });
    }
    case 'date': {
      const data = new Int32Array(rows);
      owned.push(data.buffer);
      for (const v of cells(chunks, c)) {
        const day = dateCell(v);
        data[i] = day ?? 0;
        validity.set(i++, day !== undefined);
      }
      return A.makeData({ type: new A.DateDay(), length: rows, data, ...nulls() });
    }
  }
}

export async function toArrowIpc(table: TableData): Promise<Uint8Array> {
  const A = await arrow();
  let rows = 0;
  for (const chunk of table.chunks) rows += chunk.rows;
  const vectors: Record<string, Arrow.Vector> = {};
  const owned: ArrayBuffer[] = [];
  table.columns.forEach((def, c) => {
    vectors[def.name] = new A.Vector([columnData(A, def, table.chunks, c, rows, owned)]);
  });
  const ipc = A.tableToIPC(new A.Table(vectors), 'stream');
  // The writer copied the columns into the stream: free them now rather than at the next full
  // GC. Dead column buffers waiting for it fragmented the malloc heap: 1,000 Arrow answers of
  // 1,000 bars left it ~30 MiB larger (BENCHMARKS.md, issue 30 item 3, twelfth session).
  releaseBuffers(owned, ipc.buffer);
  return ipc;
}
