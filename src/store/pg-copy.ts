// `COPY (SELECT …) TO STDOUT (FORMAT binary)` through a `pg` client, for the store's bulk reads:
// the rows arrive as PostgreSQL's binary COPY stream, blobs as their bytes. A query's bytea column
// arrives as hex text (pg cannot read binary results), which costs the server an encoding, twice
// the bytes on the socket and the client a UTF-8 and a hex decode, and every row a JavaScript row
// object; here the whole answer is one buffer read with offsets (BENCHMARKS.md, the store's bulk
// views). COPY takes no bind parameters: callers inline only integers (`sqlInt`) and quoted
// identifiers.
//
// The binary COPY format (PostgreSQL documentation, COPY, "Binary Format"): the 11-byte signature
// PGCOPY\n\xff\r\n\0, an int32 of flags, an int32 header-extension length and that many bytes;
// then per row an int16 field count and per field an int32 length (-1: NULL) and that many bytes
// of the type's binary form (int4, int8: big-endian two's complement; bytea: the bytes); an int16
// of -1 ends the stream. All integers are big-endian.
import type pg from 'pg';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** An integer for a COPY statement's text, refusing anything else (COPY has no parameters). */
export function sqlInt(n: number): string {
  if (!Number.isSafeInteger(n)) throw new TypeError(`not an integer for SQL: ${n}`);
  return String(n);
}

/**
 * pg's Submittable for one `COPY … TO STDOUT` statement: collects the CopyData messages into one
 * buffer. pg hands each message's bytes as a view of its parser's buffer, which it reuses, so each
 * is copied at once.
 */
class CopyOut {
  readonly done: Promise<Buffer>;
  private buf = Buffer.allocUnsafe(1 << 16);
  private length = 0;
  private failed: unknown;
  private settle!: { resolve: (b: Buffer) => void; reject: (e: unknown) => void };
  private readonly text: string;

  constructor(text: string) {
    this.text = text;
    this.done = new Promise<Buffer>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
  }

  submit(connection: { query: (text: string) => void }): void {
    connection.query(this.text);
  }

  handleCopyData(message: { chunk: Buffer }): void {
    const n = message.chunk.length;
    if (this.length + n > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
      this.buf.copy(grown, 0, 0, this.length);
      this.buf = grown;
    }
    message.chunk.copy(this.buf, this.length);
    this.length += n;
  }

  /** A statement error (ReadyForQuery follows) or the connection's end (nothing follows): fail now. */
  handleError(error: unknown): void {
    this.failed ??= error;
    this.settle.reject(error);
  }

  handleReadyForQuery(): void {
    if (this.failed === undefined) this.settle.resolve(this.buf.subarray(0, this.length));
  }

  // Messages a COPY TO does not send.
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
}

/**
 * Runs `COPY (…) TO STDOUT (FORMAT binary)` on a connection of `pool` and returns the stream's
 * bytes. A connection whose COPY failed is not given back to the pool (its state is unknown).
 */
export async function copyOutBinary(pool: pg.Pool, text: string): Promise<Buffer> {
  const client = await pool.connect();
  const copy = new CopyOut(text);
  try {
    client.query(copy);
    const bytes = await copy.done;
    client.release();
    return bytes;
  } catch (error) {
    client.release(error instanceof Error ? error : new Error(String(error)));
    throw error;
  }
}

/** Reads a binary COPY stream field by field; `row` returns false past the last row. */
export class CopyReader {
  private off: number;
  private readonly buf: Buffer;

  constructor(buf: Buffer) {
    if (buf.length < 19 || !buf.subarray(0, 11).equals(SIGNATURE)) throw new Error('not a binary COPY stream');
    this.buf = buf;
    this.off = 19 + buf.readInt32BE(15);
  }

  /** Starts the next row, checking it has `fields` fields; false at the end of the stream. */
  row(fields: number): boolean {
    const n = this.buf.readInt16BE(this.off);
    this.off += 2;
    if (n === -1) return false;
    if (n !== fields) throw new Error(`binary COPY row of ${n} fields, expected ${fields}`);
    return true;
  }

  private size(expected?: number): number {
    const n = this.buf.readInt32BE(this.off);
    this.off += 4;
    if (n !== -1 && expected !== undefined && n !== expected) throw new Error(`binary COPY field of ${n} bytes, expected ${expected}`);
    return n;
  }

  int4(): number | null {
    if (this.size(4) === -1) return null;
    const v = this.buf.readInt32BE(this.off);
    this.off += 4;
    return v;
  }

  /** An int8 as a number (exact below 2^53, as every value the store keeps). */
  int8(): number | null {
    if (this.size(8) === -1) return null;
    const v = this.buf.readInt32BE(this.off) * 4294967296 + this.buf.readUInt32BE(this.off + 4);
    this.off += 8;
    return v;
  }

  /** A bytea's bytes: a view of the stream's buffer, not a copy. */
  bytes(): Buffer | null {
    const n = this.size();
    if (n === -1) return null;
    const v = this.buf.subarray(this.off, this.off + n);
    this.off += n;
    return v;
  }
}
