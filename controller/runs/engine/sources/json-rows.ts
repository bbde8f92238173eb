import { StringDecoder } from 'node:string_decoder';
import { type Token, jsonParser } from 'stream-json/core/parser.js';
import { LineSplitter, recordTooLarge } from './limits.ts';

/** stream-chain's "no value" marker: flushes the parser (and checks the document is complete). */
const FLUSH = Symbol.for('object-stream.none');

type Container = unknown[] | Record<string, unknown>;

/** Builds one JSON value from streamed tokens, counting its size; past `max` it throws before holding more. */
class ValueBuilder {
  readonly #max: number;
  readonly #which: string;
  readonly #stack: Container[] = [];
  #key = '';
  #text = '';
  #bytes = 0;
  value: unknown;
  done = false;

  constructor(max: number, which: string) {
    this.#max = max;
    this.#which = which;
  }

  /** Feeds one token; answers true once the value is complete. */
  consume(t: Token): boolean {
    this.#bytes += 1 + ('value' in t && typeof t.value === 'string' ? t.value.length : 0);
    if (this.#bytes > this.#max) throw recordTooLarge(this.#max, this.#which);
    switch (t.name) {
      case 'startObject':
        this.#open({});
        break;
      case 'startArray':
        this.#open([]);
        break;
      case 'endObject':
      case 'endArray':
        this.#stack.pop();
        if (this.#stack.length === 0) this.done = true;
        break;
      case 'startKey':
      case 'startString':
      case 'startNumber':
        this.#text = '';
        break;
      case 'stringChunk':
      case 'numberChunk':
        this.#text += t.value;
        break;
      case 'endKey':
        this.#key = this.#text;
        break;
      case 'keyValue':
        this.#key = t.value;
        break;
      case 'endString':
        this.#add(this.#text);
        break;
      case 'endNumber':
        this.#add(Number(this.#text));
        break;
      case 'stringValue':
        this.#add(t.value);
        break;
      case 'numberValue':
        this.#add(Number(t.value));
        break;
      case 'nullValue':
      case 'trueValue':
      case 'falseValue':
        this.#add(t.value);
        break;
      default:
        break;
    }
    return this.done;
  }

  #open(c: Container): void {
    if (this.#stack.length === 0) this.value = c;
    else this.#put(c);
    this.#stack.push(c);
  }

  #add(v: unknown): void {
    this.#text = '';
    if (this.#stack.length === 0) {
      this.value = v;
      this.done = true;
    } else this.#put(v);
  }

  #put(v: unknown): void {
    const top = this.#stack[this.#stack.length - 1] as Container;
    if (Array.isArray(top)) top.push(v);
    // As JSON.parse does: "__proto__" is an own property, never the prototype.
    else if (this.#key === '__proto__') Object.defineProperty(top, this.#key, { value: v, writable: true, enumerable: true, configurable: true });
    else top[this.#key] = v;
  }
}

/** The document is not the shape asked for (no array at rootKey, a line that is not JSON). */
export class JsonShapeError extends Error {}

const VALUE_START = new Set(['startObject', 'startArray', 'startString', 'startNumber', 'stringValue', 'numberValue', 'nullValue', 'trueValue', 'falseValue']);

const startsWith = (path: string[], prefix: string[]): boolean => prefix.length <= path.length && prefix.every((p, i) => path[i] === p);
const same = (a: string[], b: string[]): boolean => a.length === b.length && startsWith(a, b);

export interface JsonRowsOptions {
  /** Dotted path of the array to stream (through objects); the document itself when absent. */
  rootKey?: string;
  /** Dotted path of one more value to keep while streaming (a page's pagination token), before or after the array. */
  keep?: string;
  /** One element (and the kept value) at most this many bytes of JSON text. */
  maxRecordBytes: number;
}

/**
 * Streams the elements of the array at `rootKey` out of a JSON document fed in chunks: only one
 * element is held at a time, everything outside the array and the `keep` path is skipped token by
 * token (never held). Errors name positions, never content.
 */
export class JsonRowsReader {
  readonly #o: JsonRowsOptions;
  readonly #root: string[];
  readonly #keepPath: string[] | undefined;
  readonly #parse = jsonParser({ packValues: false, streamValues: true });
  readonly #decoder = new StringDecoder('utf8');
  /** Object keys on the way to the array or the kept value. */
  readonly #frames: { key: string }[] = [];
  #key: string | undefined;
  #inRoot = false;
  #found = false;
  #skipDepth = 0;
  #skipScalar = false;
  #builder: { b: ValueBuilder; target: 'row' | 'keep' } | undefined;
  #elements = 0;
  #started = false;
  /** The value found at `keep` (undefined when absent). */
  kept: unknown;

  constructor(o: JsonRowsOptions) {
    this.#o = o;
    this.#root = o.rootKey ? o.rootKey.split('.') : [];
    this.#keepPath = o.keep ? o.keep.split('.') : undefined;
  }

  /** The array's elements completed by this chunk. */
  write(chunk: Buffer): unknown[] {
    let text = this.#decoder.write(chunk);
    if (!this.#started && text.length > 0) {
      this.#started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    return this.#feed(this.#parse(text));
  }

  /** Ends the document: throws when it is incomplete or has no array at `rootKey`. */
  end(): unknown[] {
    const rows = this.#feed(this.#parse(this.#decoder.end()));
    rows.push(...this.#feed((this.#parse as unknown as (x: symbol) => unknown)(FLUSH)));
    if (!this.#found) throw new JsonShapeError(`${this.#o.rootKey ? `rootKey ${this.#o.rootKey}` : 'the response'} is not an array`);
    return rows;
  }

  #feed(out: unknown): unknown[] {
    const rows: unknown[] = [];
    const tokens = out !== null && typeof out === 'object' && 'values' in out ? (out as { values: Token[] }).values : [];
    for (const t of tokens) {
      const built = this.#builder;
      if (built) {
        if (built.b.consume(t)) {
          this.#builder = undefined;
          if (built.target === 'row') rows.push(built.b.value);
          else this.kept = built.b.value;
        }
        continue;
      }
      if (this.#skipDepth > 0) {
        if (t.name === 'startObject' || t.name === 'startArray') this.#skipDepth++;
        else if (t.name === 'endObject' || t.name === 'endArray') this.#skipDepth--;
        continue;
      }
      if (this.#skipScalar) {
        if (t.name === 'endString' || t.name === 'endNumber') this.#skipScalar = false;
        continue;
      }
      if (this.#inRoot) {
        if (t.name === 'endArray') {
          this.#inRoot = false;
          continue;
        }
        this.#elements++;
        const b = new ValueBuilder(this.#o.maxRecordBytes, `at element ${this.#elements}`);
        if (b.consume(t)) rows.push(b.value);
        else this.#builder = { b, target: 'row' };
        continue;
      }
      this.#structure(t);
    }
    return rows;
  }

  /** Outside the array and the kept value: object keys, and where each value goes. */
  #structure(t: Token): void {
    switch (t.name) {
      case 'startKey':
        this.#key = '';
        return;
      case 'stringChunk':
        if (this.#key !== undefined) {
          this.#key += t.value;
          if (this.#key.length > this.#o.maxRecordBytes) throw recordTooLarge(this.#o.maxRecordBytes, 'at a key');
        }
        return;
      case 'endKey':
        (this.#frames[this.#frames.length - 1] as { key: string }).key = this.#key ?? '';
        this.#key = undefined;
        return;
      case 'keyValue':
        (this.#frames[this.#frames.length - 1] as { key: string }).key = t.value;
        return;
      case 'endObject':
        this.#frames.pop();
        return;
      default:
        if (VALUE_START.has(t.name)) this.#value(t);
    }
  }

  #value(t: Token): void {
    const path = this.#frames.map((f) => f.key);
    if (same(path, this.#root) && !this.#found) {
      if (t.name !== 'startArray') throw new JsonShapeError(`${this.#o.rootKey ? `rootKey ${this.#o.rootKey}` : 'the response'} is not an array`);
      this.#found = true;
      this.#inRoot = true;
      return;
    }
    if (this.#keepPath && same(path, this.#keepPath)) {
      const b = new ValueBuilder(this.#o.maxRecordBytes, `at ${this.#o.keep}`);
      if (b.consume(t)) this.kept = b.value;
      else this.#builder = { b, target: 'keep' };
      return;
    }
    if (t.name === 'startObject' && (startsWith(this.#root, path) || (this.#keepPath && startsWith(this.#keepPath, path)))) {
      this.#frames.push({ key: '' });
      return;
    }
    if (t.name === 'startObject' || t.name === 'startArray') this.#skipDepth = 1;
    else if (t.name === 'startString' || t.name === 'startNumber') this.#skipScalar = true;
  }
}

/** NDJSON fed in chunks: one value per non-blank line, no line longer than `maxRecordBytes` held. */
export class NdjsonReader {
  readonly #lines: LineSplitter;

  constructor(maxRecordBytes: number) {
    this.#lines = new LineSplitter(maxRecordBytes);
  }

  write(chunk: Buffer): unknown[] {
    return this.#parse(this.#lines.write(chunk));
  }

  end(): unknown[] {
    return this.#parse(this.#lines.end());
  }

  #parse(texts: string[]): unknown[] {
    const values: unknown[] = [];
    let line = this.#lines.count - texts.length;
    for (const text of texts) {
      line++;
      if (text.trim() === '') continue;
      try {
        values.push(JSON.parse(text));
      } catch {
        // JSON.parse's message quotes the text: the line number only.
        throw new JsonShapeError(`line ${line} is not JSON`);
      }
    }
    return values;
  }
}
