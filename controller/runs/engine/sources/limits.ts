import { DEFAULT_SOURCE_LIMITS as DEFAULTS } from '../../../config.ts';
import type { Readable } from 'node:stream';

/** What one source may hold: one response (api, s3) and one record (CSV line, NDJSON line, JSON array element). */
export interface SourceLimits {
  /** `BI_RUN_MAX_RESPONSE_BYTES`: bytes of one response body (an API page, an S3 object), after decompression. */
  maxResponseBytes: number;
  /** `BI_RUN_MAX_RECORD_BYTES`: bytes of one record. */
  maxRecordBytes: number;
}

export const DEFAULT_SOURCE_LIMITS: SourceLimits = DEFAULTS;

/** A source went past one of its limits: the step fails with this message. */
export class SourceLimitError extends Error {}

export const responseTooLarge = (max: number): SourceLimitError => new SourceLimitError(`response larger than BI_RUN_MAX_RESPONSE_BYTES (${max} bytes)`);

export const recordTooLarge = (max: number, which?: string): SourceLimitError =>
  new SourceLimitError(`record${which ? ` ${which}` : ''} larger than BI_RUN_MAX_RECORD_BYTES (${max} bytes)`);

export interface BoundedOptions {
  maxBytes: number;
  /** A wait for the next chunk longer than this destroys the stream (a server that stops sending). */
  idleMs?: number;
}

/**
 * The chunks of a byte stream, one at a time as the consumer asks (backpressure), failing as soon
 * as more than `maxBytes` arrived; the stream is destroyed when the consumer stops early.
 */
export async function* boundedChunks(stream: Readable, o: BoundedOptions): AsyncIterable<Buffer> {
  let total = 0;
  const it = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  let finished = false;
  try {
    for (;;) {
      const idleMs = o.idleMs;
      const timer = idleMs === undefined ? undefined : setTimeout(() => stream.destroy(Object.assign(new Error(`stopped sending for ${idleMs} ms`), { name: 'TimeoutError' })), idleMs);
      let step: IteratorResult<Buffer | string>;
      try {
        step = await it.next();
      } finally {
        clearTimeout(timer);
      }
      if (step.done) {
        finished = true;
        return;
      }
      const chunk = typeof step.value === 'string' ? Buffer.from(step.value) : step.value;
      total += chunk.length;
      if (total > o.maxBytes) throw responseTooLarge(o.maxBytes);
      yield chunk;
    }
  } finally {
    if (!finished) stream.destroy();
  }
}

/** Splits bytes into lines (`\n`, a trailing `\r` dropped), failing on a line longer than `maxBytes` before it is held whole. */
export class LineSplitter {
  readonly #max: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** Lines returned so far. */
  count = 0;

  constructor(maxBytes: number) {
    this.#max = maxBytes;
  }

  write(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      lines.push(this.#take(chunk.subarray(start, nl)));
      start = nl + 1;
    }
    if (start < chunk.length) {
      this.#pendingBytes += chunk.length - start;
      if (this.#pendingBytes > this.#max) throw recordTooLarge(this.#max, `on line ${this.count + 1}`);
      this.#pending.push(chunk.subarray(start));
    }
    return lines;
  }

  /** The last line (without a newline), if any. */
  end(): string[] {
    return this.#pendingBytes > 0 ? [this.#take(Buffer.alloc(0))] : [];
  }

  #take(piece: Buffer): string {
    this.count++;
    if (this.#pendingBytes + piece.length > this.#max) throw recordTooLarge(this.#max, `on line ${this.count}`);
    const bytes = this.#pending.length > 0 ? Buffer.concat([...this.#pending, piece]) : piece;
    this.#pending = [];
    this.#pendingBytes = 0;
    const text = bytes.toString('utf8');
    return text.endsWith('\r') ? text.slice(0, -1) : text;
  }
}
