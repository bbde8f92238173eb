import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import type { Batch } from '../types.ts';

const READ_CHUNK = 1 << 20;

/** A private temporary folder for one step; `remove()` deletes it and everything in it. */
export async function tempFolder(parent: string, prefix: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(parent, prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/**
 * Batches written to a file (length-prefixed V8 frames: Dates and BigInts survive) and read back
 * in order, so a step that needs two passes over the stream keeps one batch in memory, not all.
 */
export class BatchSpill {
  readonly #path: string;
  #file: FileHandle | undefined;
  #frames = 0;

  constructor(path: string) {
    this.#path = path;
  }

  async write(batch: Batch): Promise<void> {
    this.#file ??= await open(this.#path, 'w');
    const body = serialize(batch);
    const head = Buffer.allocUnsafe(4);
    head.writeUInt32LE(body.length);
    await this.#file.writev([head, body]);
    this.#frames++;
  }

  async *read(): AsyncIterable<Batch> {
    if (this.#file) await this.#file.close();
    this.#file = undefined;
    if (this.#frames === 0) return;
    const file = await open(this.#path, 'r');
    try {
      let position = 0;
      const head = Buffer.alloc(4);
      for (let i = 0; i < this.#frames; i++) {
        await file.read(head, 0, 4, position);
        const size = head.readUInt32LE(0);
        const body = Buffer.allocUnsafe(size);
        await file.read(body, 0, size, position + 4);
        position += 4 + size;
        yield deserialize(body) as Batch;
      }
    } finally {
      await file.close();
    }
  }

  async close(): Promise<void> {
    await this.#file?.close();
    this.#file = undefined;
  }
}

/** Numbers appended to a file as float64 and read back in chunks (outlier statistics). */
export class NumberSpill {
  readonly #path: string;
  #file: FileHandle | undefined;
  count = 0;

  constructor(path: string) {
    this.#path = path;
  }

  async append(values: Float64Array): Promise<void> {
    if (values.length === 0) return;
    this.#file ??= await open(this.#path, 'w');
    await this.#file.write(new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
    this.count += values.length;
  }

  async finish(): Promise<void> {
    await this.#file?.close();
    this.#file = undefined;
  }

  async *chunks(): AsyncIterable<Float64Array> {
    if (this.count === 0) return;
    const file = await open(this.#path, 'r');
    try {
      const buf = Buffer.allocUnsafe(READ_CHUNK);
      let position = 0;
      for (;;) {
        const { bytesRead } = await file.read(buf, 0, READ_CHUNK, position);
        if (bytesRead === 0) break;
        position += bytesRead;
        yield new Float64Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + bytesRead));
      }
    } finally {
      await file.close();
    }
  }
}

/**
 * The k-th smallest (0-based) of the spilled numbers, exactly, with bounded memory: while more than
 * `memoryCap` candidates remain, one pass builds a histogram of them and keeps only the bucket that
 * holds rank k; the last candidates are sorted in memory.
 */
export async function kthSmallest(values: NumberSpill, k: number, memoryCap = 2_000_000, buckets = 4096): Promise<number> {
  type Filter = { min: number; max: number; bucket: number };
  const filters: Filter[] = [];
  const bucketOf = (v: number, f: { min: number; max: number }): number =>
    f.max === f.min ? 0 : Math.min(buckets - 1, Math.floor(((v - f.min) / (f.max - f.min)) * buckets));
  const candidate = (v: number): boolean => filters.every((f) => bucketOf(v, f) === f.bucket);
  let below = 0;
  for (;;) {
    let count = 0;
    let min = Infinity;
    let max = -Infinity;
    for await (const chunk of values.chunks()) {
      for (const v of chunk) {
        if (!candidate(v)) continue;
        count++;
        if (v < min) min = v;
        if (v > max) max = v;
      }
    }
    if (min === max) return min;
    if (count <= memoryCap) {
      const kept = new Float64Array(count);
      let i = 0;
      for await (const chunk of values.chunks()) for (const v of chunk) if (candidate(v)) kept[i++] = v;
      kept.sort();
      return kept[k - below] as number;
    }
    const hist = new Float64Array(buckets);
    for await (const chunk of values.chunks()) for (const v of chunk) {
        if (!candidate(v)) continue;
        const b = bucketOf(v, { min, max });
        hist[b] = (hist[b] as number) + 1;
      }
    let bucket = 0;
    while (below + (hist[bucket] as number) <= k) below += hist[bucket++] as number;
    filters.push({ min, max, bucket });
  }
}
