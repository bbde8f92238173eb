import { StringDecoder } from 'node:string_decoder';
import { LineSplitter, recordTooLarge } from './limits.ts';

/** The document is not the shape asked for (no array at rootKey, a line that is not JSON). */
export class JsonShapeError extends Error {}

const startsWith = (path: string[], prefix: string[]): boolean => prefix.length <= path.length && prefix.every((p, i) => path[i] === p);
const same = (a: string[], b: string[]): boolean => a.length === b.length && startsWith(a, b);

export interface JsonRowsOptions {
  /** Dotted path of the array to stream (through objects); the document itself when absent. */
  rootKey?: string;
  /** Dotted path of one more value to keep while streaming (a page's pagination token), before or after the array. */
  keep?: string;
  /** One element (and the kept value, and any key) at most this many characters of JSON text. */
  maxRecordBytes: number;
}

/** An object or the streamed array, on the way from the document's top to the array or the kept value. */
interface Frame {
  array: boolean;
  /** object: key → colon → value → comma; array: value → comma. */
  phase: 'key' | 'colon' | 'value' | 'comma';
  key: string;
}

/** A value being read: its text kept (an element, the kept value, a key) or skipped. */
interface Scan {
  target: 'row' | 'keep' | 'key' | 'skip';
  depth: number;
  inString: boolean;
  escape: boolean;
  /** A number, true, false or null: ends at the next delimiter. */
  bare: boolean;
  parts: string[];
  length: number;
}

const WS = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
/** `,` `]` `}` or whitespace. */
const ENDS_BARE = (c: number): boolean => c === 0x2c || c === 0x5d || c === 0x7d || WS(c);

class JsonSyntaxError extends Error {}

/**
 * Streams the elements of the array at `rootKey` out of a JSON document fed in chunks. A scanner
 * follows the structure (objects on the way, strings, depth) and cuts each element's text, which
 * JSON.parse reads: one element is held at a time, its size capped before it is held whole.
 * Values outside the array and the kept value are skipped, never held (nor fully validated).
 * Errors name positions, never content.
 */
export class JsonRowsReader {
  readonly #o: JsonRowsOptions;
  readonly #root: string[];
  readonly #keepPath: string[] | undefined;
  readonly #decoder = new StringDecoder('utf8');
  readonly #frames: Frame[] = [];
  #scan: Scan | undefined;
  /** The document's one top-level value has been read. */
  #done = false;
  #found = false;
  #started = false;
  #elements = 0;
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
    const rows: unknown[] = [];
    this.#feed(text, rows);
    return rows;
  }

  /** Ends the document: throws when it is incomplete or has no array at `rootKey`. */
  end(): unknown[] {
    const rows: unknown[] = [];
    this.#feed(this.#decoder.end(), rows);
    const scan = this.#scan;
    if (scan?.bare && this.#frames.length === 0) this.#finish(scan, '', rows);
    if (!this.#done) throw new JsonSyntaxError('the document is not complete JSON');
    if (!this.#found) throw this.#notArray();
    return rows;
  }

  #notArray(): JsonShapeError {
    return new JsonShapeError(`${this.#o.rootKey ? `rootKey ${this.#o.rootKey}` : 'the response'} is not an array`);
  }

  #feed(text: string, rows: unknown[]): void {
    let i = 0;
    const n = text.length;
    while (i < n) {
      const scan = this.#scan;
      if (scan) {
        const end = this.#scanTo(scan, text, i);
        if (end < 0) {
          this.#keep(scan, text, i, n);
          return;
        }
        this.#keep(scan, text, i, end);
        this.#finish(scan, text, rows);
        i = end;
        continue;
      }
      const c = text.charCodeAt(i);
      if (WS(c)) {
        i++;
        continue;
      }
      i = this.#structure(c, text, i);
    }
  }

  /** Where the value being scanned ends in `text` from `i` (the index after it), or -1 when it goes on. */
  #scanTo(s: Scan, text: string, i: number): number {
    const n = text.length;
    if (s.bare) {
      for (let j = i; j < n; j++) if (ENDS_BARE(text.charCodeAt(j))) return j;
      return -1;
    }
    for (let j = i; j < n; j++) {
      const c = text.charCodeAt(j);
      if (s.inString) {
        if (s.escape) s.escape = false;
        else if (c === 0x5c) s.escape = true;
        else if (c === 0x22) {
          s.inString = false;
          if (s.depth === 0) return j + 1;
        }
      } else if (c === 0x22) s.inString = true;
      else if (c === 0x7b || c === 0x5b) s.depth++;
      else if (c === 0x7d || c === 0x5d) {
        s.depth--;
        if (s.depth === 0) return j + 1;
      }
    }
    return -1;
  }

  /** Keeps `text[from, to)` of a value whose text is wanted, within the cap. */
  #keep(s: Scan, text: string, from: number, to: number): void {
    if (s.target === 'skip' || to <= from) return;
    s.length += to - from;
    if (s.length > this.#o.maxRecordBytes) {
      throw recordTooLarge(this.#o.maxRecordBytes, s.target === 'row' ? `at element ${this.#elements}` : s.target === 'keep' ? `at ${this.#o.keep}` : 'at a key');
    }
    s.parts.push(text.slice(from, to));
  }

  #finish(s: Scan, _text: string, rows: unknown[]): void {
    this.#scan = undefined;
    if (s.target !== 'skip') {
      let value: unknown;
      try {
        value = JSON.parse(s.parts.length === 1 ? (s.parts[0] as string) : s.parts.join(''));
      } catch {
        // JSON.parse's message quotes the text: the position only.
        throw new JsonSyntaxError(s.target === 'row' ? `element ${this.#elements} is not JSON` : 'the document is not JSON');
      }
      if (s.target === 'row') rows.push(value);
      else if (s.target === 'keep') this.kept = value;
      else {
        (this.#frames[this.#frames.length - 1] as Frame).key = value as string;
        (this.#frames[this.#frames.length - 1] as Frame).phase = 'colon';
        return;
      }
    }
    this.#valueDone();
  }

  /** A value of the current frame (or the document) is complete. */
  #valueDone(): void {
    const top = this.#frames[this.#frames.length - 1];
    if (top) top.phase = 'comma';
    else this.#done = true;
  }

  #begin(target: Scan['target'], text: string, i: number): number {
    const c = text.charCodeAt(i);
    const bare = c !== 0x7b && c !== 0x5b && c !== 0x22;
    this.#scan = { target, depth: c === 0x7b || c === 0x5b ? 1 : 0, inString: c === 0x22, escape: false, bare, parts: [], length: 0 };
    if (bare) return i;
    this.#keep(this.#scan, text, i, i + 1);
    return i + 1;
  }

  /** One structural character outside any value being scanned; answers where to go on. */
  #structure(c: number, text: string, i: number): number {
    const top = this.#frames[this.#frames.length - 1];
    if (!top) {
      if (this.#done) throw new JsonSyntaxError('the document is not JSON');
      return this.#value(c, text, i);
    }
    if (top.array) {
      if (c === 0x5d && top.phase !== 'colon') {
        this.#frames.pop();
        this.#valueDone();
        return i + 1;
      }
      if (top.phase === 'comma') {
        if (c !== 0x2c) throw new JsonSyntaxError('the document is not JSON');
        top.phase = 'value';
        return i + 1;
      }
      this.#elements++;
      return this.#begin('row', text, i);
    }
    switch (top.phase) {
      case 'key':
        if (c === 0x7d) {
          this.#frames.pop();
          this.#valueDone();
          return i + 1;
        }
        if (c !== 0x22) throw new JsonSyntaxError('the document is not JSON');
        return this.#begin('key', text, i);
      case 'colon':
        if (c !== 0x3a) throw new JsonSyntaxError('the document is not JSON');
        top.phase = 'value';
        return i + 1;
      case 'value':
        return this.#value(c, text, i);
      default:
        if (c === 0x7d) {
          this.#frames.pop();
          this.#valueDone();
          return i + 1;
        }
        if (c !== 0x2c) throw new JsonSyntaxError('the document is not JSON');
        top.phase = 'key';
        return i + 1;
    }
  }

  /** A value starts at `i`: the array, the kept value, an object on the way to them, or something to skip. */
  #value(c: number, text: string, i: number): number {
    const path = this.#frames.map((f) => f.key);
    if (same(path, this.#root) && !this.#found) {
      if (c !== 0x5b) throw this.#notArray();
      this.#found = true;
      this.#frames.push({ array: true, phase: 'value', key: '' });
      return i + 1;
    }
    if (this.#keepPath && same(path, this.#keepPath)) return this.#begin('keep', text, i);
    if (c === 0x7b && (startsWith(this.#root, path) || (this.#keepPath !== undefined && startsWith(this.#keepPath, path)))) {
      this.#frames.push({ array: false, phase: 'key', key: '' });
      return i + 1;
    }
    return this.#begin('skip', text, i);
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
