import { constants } from 'node:fs';
import { type FileHandle, open, realpath } from 'node:fs/promises';
import { extname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { CsvError, parse as parseCsv } from 'csv-parse';
import type { Batch, Row } from '../../types.ts';
import { isObject } from '../step.ts';
import { JsonRowsReader, NdjsonReader } from './json-rows.ts';
import { recordTooLarge } from './limits.ts';

export type FileFormat = 'csv' | 'json' | 'ndjson';

/** The format named by config, or by the file extension (`.csv`, `.json`, `.ndjson`/`.jsonl`). */
export function formatOf(name: string, configured: unknown): FileFormat {
  if (configured === 'csv' || configured === 'json' || configured === 'ndjson') return configured;
  if (configured !== undefined) throw new Error(`format ${JSON.stringify(configured)} must be csv, json or ndjson`);
  const ext = extname(name).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.json') return 'json';
  if (ext === '.ndjson' || ext === '.jsonl') return 'ndjson';
  throw new Error(`cannot tell the format of ${name}: set config.format to csv, json or ndjson`);
}

/**
 * Opens `path` (relative to `dir`) for reading only when it is a regular file inside `dir` once
 * every symlink is resolved; the opened file is checked to be the one that was resolved.
 */
export async function openInside(dir: string, path: string): Promise<FileHandle> {
  if (isAbsolute(path) || path.split(/[\\/]/).includes('..')) throw new Error(`file ${path} must be a path inside BI_PIPELINE_FILES_DIR`);
  const root = await realpath(dir).catch(() => {
    throw new Error(`BI_PIPELINE_FILES_DIR ${dir} does not exist`);
  });
  const real = await realpath(resolve(root, path)).catch(() => {
    throw new Error(`file ${path} does not exist in BI_PIPELINE_FILES_DIR`);
  });
  const rel = relative(root, real);
  if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) throw new Error(`file ${path} resolves outside BI_PIPELINE_FILES_DIR`);
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  const stat = await handle.stat();
  if (!stat.isFile()) {
    await handle.close();
    throw new Error(`file ${path} is not a regular file`);
  }
  return handle;
}

export async function readJsonFile(dir: string, path: string): Promise<unknown> {
  const handle = await openInside(dir, path);
  let text: string;
  try {
    text = await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // JSON.parse's message quotes the text it read: never the file's content in an error.
    throw new Error(`file ${path} is not valid JSON`);
  }
}

const asRow = (v: unknown): Row => (isObject(v) ? v : { value: v });

/** Groups a stream of rows into batches of `size`. */
async function* batches(rows: AsyncIterable<Row>, size: number): AsyncIterable<Batch> {
  let batch: Batch = [];
  for await (const row of rows) {
    batch.push(row);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

async function* csvRows(input: Readable, delimiter: string | undefined, maxRecordBytes: number): AsyncIterable<Row> {
  // An unquoted empty field is null (as PostgreSQL's COPY … CSV reads it); a quoted "" stays ''.
  const parser = parseCsv({
    columns: true,
    bom: true,
    skip_empty_lines: true,
    trim: false,
    delimiter: delimiter ?? ',',
    max_record_size: maxRecordBytes,
    cast: (value, context) => (value === '' && !context.quoting ? null : value),
  });
  input.on('error', (err) => parser.destroy(err));
  const rows = input.pipe(parser);
  try {
    for await (const row of rows) yield row as Row;
  } catch (err) {
    // csv-parse's messages quote the input: only its code and line are kept.
    const e = err as Error & { code?: string; lines?: number };
    if (e.code === 'CSV_MAX_RECORD_SIZE') throw recordTooLarge(maxRecordBytes, `on line ${e.lines ?? '?'}`);
    // Every parse error of csv-parse (its codes carry the CSV_ prefix or not, by version and path).
    if (err instanceof CsvError || (typeof e.code === 'string' && e.code.startsWith('CSV_'))) {
      throw new Error(`CSV ${String(e.code ?? 'error').replace(/^(CSV_)?/, 'CSV_')} on line ${e.lines ?? '?'}`);
    }
    throw err;
  } finally {
    input.unpipe(parser);
    parser.destroy();
  }
}

async function* ndjsonRows(input: AsyncIterable<Buffer>, maxRecordBytes: number): AsyncIterable<Row[]> {
  const reader = new NdjsonReader(maxRecordBytes);
  for await (const chunk of input) yield reader.write(chunk).map(asRow);
  yield reader.end().map(asRow);
}

/** A JSON document: a top-level array, or the array at `rootKey` (dotted path), streamed item by item. */
async function* jsonRows(input: AsyncIterable<Buffer>, rootKey: string | undefined, maxRecordBytes: number): AsyncIterable<Row[]> {
  const reader = new JsonRowsReader({ rootKey, maxRecordBytes });
  for await (const chunk of input) yield reader.write(chunk).map(asRow);
  yield reader.end().map(asRow);
}

export interface ParseOptions {
  format: FileFormat;
  batchSize: number;
  delimiter?: string;
  rootKey?: string;
  /** `BI_RUN_MAX_RECORD_BYTES`: one CSV line, NDJSON line or JSON element at most. */
  maxRecordBytes: number;
}

/** Batches of `size` rows out of groups of any size. */
async function* rebatch(groups: AsyncIterable<Row[]>, size: number): AsyncIterable<Batch> {
  let batch: Batch = [];
  for await (const group of groups) {
    for (const row of group) {
      batch.push(row);
      if (batch.length >= size) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield batch;
}

/** Rows of a CSV, JSON or NDJSON byte stream, in batches; no record longer than `maxRecordBytes` is held. */
export function parseRows(input: Readable, opts: ParseOptions): AsyncIterable<Batch> {
  if (opts.format === 'csv') return batches(csvRows(input, opts.delimiter, opts.maxRecordBytes), opts.batchSize);
  const chunks = input as AsyncIterable<Buffer>;
  return rebatch(opts.format === 'ndjson' ? ndjsonRows(chunks, opts.maxRecordBytes) : jsonRows(chunks, opts.rootKey, opts.maxRecordBytes), opts.batchSize);
}
