import { to as copyTo } from 'pg-copy-streams';

type CopyToStream = ReturnType<typeof copyTo>;

/** The parts of pg-copy-streams 7's CopyToStreamQuery the parser below works with. */
interface CopyToInternals {
  _buffer: { size: number; push(b: Buffer): void; take(n: number): Buffer } | null;
  _state: number;
  _code: number;
  _unreadMessageContentLength: number;
  _parse(chunk: Buffer): boolean | undefined;
  _detach(): void;
  _cleanup(): void;
  push(chunk: Buffer | null): boolean;
}

// Protocol message codes (pg-copy-streams' message-formats.js) and its decoder states.
const ERROR_RESPONSE = 0x45;
const COPY_DATA = 0x64;
/** Messages that may arrive between CopyData messages; any other ends copy-out mode. */
const INTERSPERSED = new Set([0x48 /* CopyOutResponse */, COPY_DATA, 0x53 /* ParameterStatus */, 0x4e /* NoticeResponse */, 0x41 /* NotificationResponse */]);
const PG_CODE = 0;
const PG_MESSAGE = 2;

/**
 * pg-copy-streams' message loop, one pass over each socket chunk: the CopyData payloads are moved
 * next to each other at the start of the chunk itself (`copyWithin`: no buffer, view or copy per
 * row), which is pushed once — instead of a slice, a list entry and a concatenation per row
 * (PostgreSQL sends one CopyData message per row). A payload only ever moves into bytes already
 * parsed (each message's 5-byte header is dropped), so the bytes after `pos` — what may go back to
 * pg — are never written. Same states, same hand-back to pg on an ErrorResponse and after CopyDone
 * (`_detach`).
 */
function parseChunk(this: CopyToInternals, chunk: Buffer): boolean | undefined {
  const pending = this._buffer as NonNullable<CopyToInternals['_buffer']>;
  const buf = pending.size > 0 ? Buffer.concat([pending.take(pending.size), chunk]) : chunk;
  const n = buf.length;
  let pos = 0;
  let out = 0;
  let done = false;
  while (pos < n || (this._state === PG_MESSAGE && this._unreadMessageContentLength === 0)) {
    if (this._state === PG_MESSAGE) {
      const take = Math.min(n - pos, this._unreadMessageContentLength);
      if (this._code === COPY_DATA && take > 0) {
        if (out !== pos) buf.copyWithin(out, pos, pos + take);
        out += take;
      }
      pos += take;
      this._unreadMessageContentLength -= take;
      if (this._unreadMessageContentLength > 0) break;
      this._state = PG_CODE;
      if (!INTERSPERSED.has(this._code)) {
        done = true;
        break;
      }
      continue;
    }
    if (buf[pos] === ERROR_RESPONSE) {
      // pg parses the error itself (as pg-copy-streams does, the rows of this chunk are dropped)
      pending.push(buf.subarray(pos));
      this._detach();
      return undefined;
    }
    if (n - pos < 5) break;
    this._code = buf[pos] as number;
    this._unreadMessageContentLength = buf.readUInt32BE(pos + 1) - 4;
    this._state = PG_MESSAGE;
    pos += 5;
  }
  if (pos < n) pending.push(buf.subarray(pos));
  const drained = out > 0 ? this.push(buf.subarray(0, out)) : true;
  if (done) {
    this._detach();
    this.push(null);
    this._cleanup();
  }
  return drained;
}

/** Whether this pg-copy-streams still has the internals parseChunk relies on. */
function hasInternals(q: object): q is CopyToInternals {
  const i = q as Partial<CopyToInternals>;
  return typeof i._parse === 'function' && typeof i._detach === 'function' && typeof i._cleanup === 'function' && i._state === PG_CODE && typeof i._buffer?.take === 'function';
}

/**
 * `COPY … TO STDOUT` as a readable stream of the COPY text in chunks (ending anywhere, also inside
 * a row), with the one-buffer-per-chunk parser when pg-copy-streams has the internals it expects
 * (7.x), its own parser otherwise. The stream is in object mode: a read answers one chunk (about a
 * socket read, 64 KB) instead of everything buffered concatenated (up to the high-water mark, MBs
 * that V8 allocates as large objects, freed only by a full collection), and `highWaterMark` counts chunks.
 */
export function copyOutStream(sql: string, options: { highWaterMark: number }): CopyToStream {
  const q = copyTo(sql, { highWaterMark: options.highWaterMark, objectMode: true });
  if (hasInternals(q)) q._parse = parseChunk;
  return q;
}

export { parseChunk as parseCopyOutChunk };
