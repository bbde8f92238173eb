import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import type { Problem } from '../types.ts';

/** 1-based line and column of `offset` in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

/**
 * Where a JSON text stops being JSON, and why; undefined when it parses. `JSON.parse` gives no
 * position on Node 20 (and quotes the text), so the text is scanned once more, only after it failed.
 */
export function jsonSyntaxError(text: string): { offset: number; reason: string } | undefined {
  let i = 0;
  const fail = (reason: string): never => {
    throw { offset: i, reason };
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const expect = (ch: string, what: string) => {
    if (text[i] !== ch) fail(i >= text.length ? 'unexpected end of input' : `expected ${what}`);
    i++;
  };
  const string = () => {
    expect('"', 'a string');
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const c = text[i];
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail('bad \\u escape');
          i += 5;
        } else if ('"\\/bfnrt'.includes(text[i] ?? '')) i++;
        else fail('bad escape');
      } else if (c < ' ') fail('control character in string');
      else i++;
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(i >= text.length ? 'unexpected end of input' : 'expected a property name in double quotes');
        string();
        ws();
        expect(':', "':' after a property name");
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        expect('}', "',' or '}' after a property value");
        return;
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        expect(']', "',' or ']' after an array item");
        return;
      }
    }
    if (c === '"') return string();
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|^(true|false|null)/.exec(text.slice(i, i + 400));
    if (!m) fail(i >= text.length ? 'unexpected end of input' : 'expected a value');
    i += (m as RegExpExecArray)[0].length;
  };
  try {
    if (text.charCodeAt(0) === 0xfeff) i = 1;
    value();
    ws();
    if (i < text.length) fail('unexpected text after the value');
    return undefined;
  } catch (err) {
    if (err && typeof err === 'object' && 'offset' in err) return err as { offset: number; reason: string };
    throw err;
  }
}

/** `spec.charts[0].colour` → `['spec', 'charts', 0, 'colour']`. */
export function pathSegments(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]);
  return out;
}

/**
 * Each problem with the line and column of the field it names in `text` (YAML or JSON): the key
 * of an unknown or present field, the object that misses a required one. Problems already placed,
 * and those whose field is not found, are returned as they are.
 */
export function locateProblems(text: string, problems: readonly Problem[]): Problem[] {
  if (!problems.some((p) => p.line === undefined && p.path)) return [...problems];
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: false });
  if (doc.errors.length) return [...problems];
  return problems.map((p) => {
    if (p.line !== undefined || !p.path) return p;
    const offset = offsetOf(doc.contents, pathSegments(p.path));
    if (offset === undefined) return p;
    const { line, col } = counter.linePos(offset);
    return { ...p, line, column: col };
  });
}

/** Offset of the deepest node of `segments` found: a map key where the key exists, else the node that should hold it. */
function offsetOf(root: unknown, segments: (string | number)[]): number | undefined {
  let node = root as Node | null;
  let at = (node as Node | null)?.range?.[0];
  for (const seg of segments) {
    if (isMap(node)) {
      const pair = node.items.find((it) => isScalar(it.key) && String(it.key.value) === String(seg));
      if (!pair) return at;
      at = (pair.key as Node).range?.[0] ?? at;
      node = pair.value as Node | null;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg] as Node | undefined;
      if (!item) return at;
      at = item.range?.[0] ?? at;
      node = item;
    } else return at;
  }
  return at;
}
