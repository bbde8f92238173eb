import { constants } from 'node:fs';
import { type FileHandle, open, realpath } from 'node:fs/promises';
import { extname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { CsvError, parse as parseCsv } from 'csv-parse';
import pick from 'stream-json/filters/pick.js';
import streamArray from 'stream-json/streamers/stream-array.js';
import parser from 'stream-json/parser.js';
import type { Batch, Row } from '../../types.ts';
import { isObject } from '../step.ts';

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

async function* csvRows(input: Readable, delimiter: string | undefined): AsyncIterable<Row> {
  // An unquoted empty field is null (as PostgreSQL's COPY … CSV reads it); a quoted "" stays ''.
  const rows = input.pipe(
    parseCsv({
      columns: true,
      bom: true,
      skip_empty_lines: true,
      trim: false,
      delimiter: delimiter ?? ',',
      cast: (value, context) => (value === '' && !context.quoting ? null : value),
    }),
  );
  try {
    for await (const row of rows) yield row as Row;
  } catch (err) {
    throw csvError(err);
  }
}

/**
 * csv-parse's messages quote the field they stumbled on (`value is "…"`, `got "…"`): the error
 * keeps its code and line only (`CSV invalid opening quote at line 2`), never the file's content.
 */
export function csvError(err: unknown): Error {
  if (!(err instanceof CsvError)) return err instanceof Error ? err : new Error(String(err));
  const lines = (err as CsvError & { lines?: unknown }).lines;
  return new Error(`CSV ${err.code.replace(/^CSV_/, '').toLowerCase().replaceAll('_', ' ')}${typeof lines === 'number' ? ` at line ${lines}` : ''}`);
}

async function* ndjsonRows(input: Readable): AsyncIterable<Row> {
  let line = 0;
  for await (const text of createInterface({ input, crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    try {
      yield asRow(JSON.parse(text));
    } catch {
      // JSON.parse's message quotes the line: never the file's content in an error.
      throw new Error(`line ${line} is not JSON`);
    }
  }
}

/** A JSON document: a top-level array, or the array at `rootKey` (dotted path), streamed item by item. */
async function* jsonRows(input: Readable, rootKey: string | undefined): AsyncIterable<Row> {
  const stages: NodeJS.ReadWriteStream[] = [parser.asStream()];
  if (rootKey) stages.push(pick.asStream({ filter: rootKey }));
  stages.push(streamArray.asStream());
  let stream: NodeJS.ReadableStream = input;
  for (const s of stages) {
    input.on('error', (err) => (s as unknown as Readable).destroy(err));
    stream = stream.pipe(s);
  }
  for await (const item of stream as AsyncIterable<{ value: unknown }>) yield asRow(item.value);
}

export interface ParseOptions {
  format: FileFormat;
  batchSize: number;
  delimiter?: string;
  rootKey?: string;
}

/** Rows of a CSV, JSON or NDJSON byte stream, in batches. */
export function parseRows(input: Readable, opts: ParseOptions): AsyncIterable<Batch> {
  const rows = opts.format === 'csv' ? csvRows(input, opts.delimiter) : opts.format === 'ndjson' ? ndjsonRows(input) : jsonRows(input, opts.rootKey);
  return batches(rows, opts.batchSize);
}
