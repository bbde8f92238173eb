import fc from 'fast-check';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type PathSeg = string | number;

/** A fuzz case: a body (raw text or JSON) and what it is, for messages. */
export interface FuzzCase {
  label: string;
  /** Raw body text as sent (JSON.stringify of `json` when that is set). */
  raw: string;
  json?: Json;
  contentType: string;
}

/** Every path to a value inside `v` (the root included). */
export function pathsOf(v: Json, at: PathSeg[] = []): PathSeg[][] {
  const out: PathSeg[][] = [at];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...pathsOf(x, [...at, i])));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) out.push(...pathsOf(x, [...at, k]));
  return out;
}

/** Every object key used anywhere in `v`. */
export function keysOf(v: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(v)) v.forEach((x) => keysOf(x, out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) {
    out.add(k);
    keysOf(x, out);
  }
  return out;
}

const clone = (v: Json): Json => JSON.parse(JSON.stringify(v)) as Json;

function setAt(root: Json, path: PathSeg[], fn: (parent: Json[] | Record<string, Json>, key: PathSeg) => void): Json {
  if (path.length === 0) return root;
  let node: Json = root;
  for (const seg of path.slice(0, -1)) node = (node as Record<string, Json>)[seg as string];
  fn(node as Record<string, Json>, path[path.length - 1]);
  return root;
}

/** Values that break assumptions: wrong types, path tricks, control characters, huge text. */
export const nastyValue: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    null,
    true,
    0,
    -1,
    1e308,
    '',
    ' ',
    '../../../../etc/passwd',
    '..',
    '/tmp/evil',
    'a/../../b',
    '..\\..\\windows',
    'name\u0000nul',
    'line\nbreak: yes',
    '%2e%2e%2fetc',
    '<script>alert(1)</script>',
    "' OR 1=1 --",
    '*&anchor',
    '{{7*7}}',
    'x'.repeat(20_000),
    [],
    {},
    [[[[[[]]]]]],
    { __proto__: { polluted: true } } as unknown as Json,
  ),
  fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
  fc.string({ unit: 'binary', maxLength: 40 }),
);

/** A mutation of `valid`: up to three fields deleted, replaced, wrapped, or prototype keys added. */
export function mutatedPayload(valid: Json): fc.Arbitrary<FuzzCase> {
  const paths = pathsOf(valid);
  const op = fc.constantFrom('delete', 'replace', 'replace', 'wrap', 'proto', 'extra');
  return fc.array(fc.tuple(fc.integer({ min: 0, max: paths.length - 1 }), op, nastyValue), { minLength: 1, maxLength: 3 }).map((mutations) => {
    let body = clone(valid);
    const labels: string[] = [];
    for (const [pi, o, val] of mutations) {
      const path = paths[pi];
      labels.push(`${o} ${path.join('.') || '(root)'}`);
      if (path.length === 0) {
        if (o === 'delete') body = {};
        else if (o === 'replace') body = val;
        continue;
      }
      try {
        setAt(body, path, (parent, key) => {
          if (parent === null || typeof parent !== 'object') return;
          const p = parent as Record<string, Json>;
          if (o === 'delete') {
            if (Array.isArray(parent)) parent.splice(key as number, 1);
            else delete p[key as string];
          } else if (o === 'replace') p[key as string] = val;
          else if (o === 'wrap') p[key as string] = [p[key as string] ?? null];
          else if (o === 'proto') {
            const target = p[key as string];
            if (target && typeof target === 'object' && !Array.isArray(target)) {
              // Own keys named __proto__ and constructor, as JSON.parse makes them.
              Object.defineProperty(target, '__proto__', { value: { polluted: 'yes' }, enumerable: true, configurable: true, writable: true });
              Object.defineProperty(target, 'constructor', { value: { prototype: { polluted: 'yes' } }, enumerable: true, configurable: true, writable: true });
            }
          } else p[`${String(key)}Extra`] = val;
        });
      } catch {
        /* an earlier mutation removed this path */
      }
    }
    return { label: `mutated: ${labels.join(', ')}`, raw: JSON.stringify(body) ?? 'null', json: body, contentType: 'application/json' };
  });
}

/** Bodies that are not the JSON object the endpoint wants at all. */
export function malformedBody(valid: Json): fc.Arbitrary<FuzzCase> {
  const text = JSON.stringify(valid);
  const json = (label: string) => (raw: string): FuzzCase => ({ label, raw, contentType: 'application/json' });
  return fc.oneof(
    fc.integer({ min: 0, max: Math.max(0, text.length - 1) }).map((n) => json(`truncated at ${n}`)(text.slice(0, n))),
    fc.tuple(fc.integer({ min: 0, max: text.length }), fc.string({ unit: 'binary', minLength: 1, maxLength: 4 })).map(([n, s]) => json(`bytes inserted at ${n}`)(text.slice(0, n) + s + text.slice(n))),
    (fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>).map((v) => ({ ...json('another JSON value')(JSON.stringify(v) ?? 'null'), json: v })),
    fc.string({ unit: 'binary', maxLength: 200 }).map(json('random text')),
    fc.constantFrom(
      json('empty body')(''),
      json('deeply nested arrays')('['.repeat(20_000) + ']'.repeat(20_000)),
      json('deeply nested objects')('{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000)),
      json('duplicate keys')(`{"name":"a","name":{"x":1},${text.slice(1)}`),
      json('a huge number')(`{"name":1${'0'.repeat(400)}}`),
      json('lone surrogate')('{"name":"\\ud800"}'),
      { label: 'text/plain body', raw: text, contentType: 'text/plain' },
      { label: 'form body', raw: 'name=a&b=c', contentType: 'application/x-www-form-urlencoded' },
      { label: 'yaml body', raw: 'name: a\n', contentType: 'application/yaml' },
    ),
  );
}

export const fuzzCase = (valid: Json): fc.Arbitrary<FuzzCase> => fc.oneof({ arbitrary: mutatedPayload(valid), weight: 3 }, { arbitrary: malformedBody(valid), weight: 2 });
