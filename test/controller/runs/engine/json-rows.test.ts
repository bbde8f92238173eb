import { describe, expect, it } from 'vitest';
import { JsonRowsReader, NdjsonReader } from '../../../../controller/runs/engine/sources/json-rows.ts';
import { LineSplitter } from '../../../../controller/runs/engine/sources/limits.ts';

/** Feeds `text` in pieces of `size` bytes; answers the elements and the kept value. */
function read(text: string, opts: { rootKey?: string; keep?: string; maxRecordBytes?: number }, size = 1): { rows: unknown[]; kept: unknown } {
  const reader = new JsonRowsReader({ maxRecordBytes: 1024, ...opts });
  const bytes = Buffer.from(text);
  const rows: unknown[] = [];
  for (let i = 0; i < bytes.length; i += size) rows.push(...reader.write(bytes.subarray(i, i + size)));
  rows.push(...reader.end());
  return { rows, kept: reader.kept };
}

describe('JsonRowsReader (streamed JSON rows)', () => {
  const doc = {
    meta: { total: 3, skip: [1, [2, { deep: 'x' }]], note: 'é "quoted" \\ \u2028' },
    data: [{ id: 1, name: 'Zoë', tags: ['a', 'b'], nested: { n: -1.5e3, ok: true, none: null } }, 2, 'three', [4], { placeholder: 1 }],
    next: 'p2',
  };

  it('yields the elements of the array at rootKey as JSON.parse would, whatever the chunking', () => {
    const text = JSON.stringify(doc).replace('{"placeholder":1}', '{"__proto__":"own"}');
    const expected = (JSON.parse(text) as { data: unknown[] }).data;
    for (const size of [1, 2, 3, 7, 64, 100_000]) {
      const { rows, kept } = read(text, { rootKey: 'data', keep: 'next' }, size);
      expect(rows).toEqual(expected);
      expect(kept).toBe('p2');
    }
    const proto = read(text, { rootKey: 'data' }).rows[4] as Record<string, unknown>;
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.keys(proto)).toEqual(['__proto__']);
  });

  it('strings with brackets, braces, escaped quotes and backslashes, in elements, keys and skipped values, at every chunking', () => {
    const text = ' { "skip\\"]}" : ["]}\\\\", {"[": "{"}] , "d\\u0061ta" :\n [ "a]\\"b", {"k": "}{[", "n": [[1], [2, {"x": "]"}]]}, -1.5e-3 , true, null, "\\\\" ] , "next" : {"c": "\\""} } ';
    const expected = (JSON.parse(text) as { data: unknown[] }).data;
    for (const size of [1, 2, 5, 1000]) expect(read(text, { rootKey: 'data', keep: 'next' }, size)).toEqual({ rows: expected, kept: { c: '"' } });
    expect(() => read('[1] [2]', {})).toThrow('the document is not JSON');
    expect(() => read('[{"a": s3cr3t}]', {})).toThrow(/^element 1 is not JSON$/);
  });

  it('the pagination value may come before or after the array, nested too; absent is undefined', () => {
    expect(read('{"next":{"cursor":"c1"},"items":[1,2]}', { rootKey: 'items', keep: 'next.cursor' }).kept).toBe('c1');
    expect(read('{"items":[1,2],"page":{"next":7}}', { rootKey: 'items', keep: 'page.next' })).toEqual({ rows: [1, 2], kept: 7 });
    expect(read('{"items":[1,2]}', { rootKey: 'items', keep: 'next' }).kept).toBeUndefined();
    expect(read('{"a":{"b":{"c":[{"x":1}]}},"a2":[]}', { rootKey: 'a.b.c' }).rows).toEqual([{ x: 1 }]);
    expect(read('  [1, {"a": [2]}]  ', {}).rows).toEqual([1, { a: [2] }]);
    expect(read('\ufeff[1]', {}).rows).toEqual([1]);
  });

  it('a document without the array, or not JSON, is an error that quotes nothing of it', () => {
    expect(() => read('{"data":{"secret":"s3cr3t"}}', { rootKey: 'data' })).toThrow(/^rootKey data is not an array$/);
    expect(() => read('{"other":[1]}', { rootKey: 'data' })).toThrow(/^rootKey data is not an array$/);
    expect(() => read('{"secret":"s3cr3t"}', {})).toThrow(/^the response is not an array$/);
    expect(() => read('[{"a":1},', {})).toThrow();
    try {
      read('[{"a":"s3cr3t"} s3cr3t]', {});
    } catch (err) {
      expect((err as Error).message).not.toContain('s3cr3t');
    }
  });

  it('an element past maxRecordBytes fails before it is held whole; large values outside the array are skipped', () => {
    const big = 'x'.repeat(5000);
    expect(() => read(JSON.stringify({ data: [{ a: 1 }, { a: big }] }), { rootKey: 'data', maxRecordBytes: 1000 }, 256)).toThrow(
      'record at element 2 larger than BI_RUN_MAX_RECORD_BYTES (1000 bytes)',
    );
    expect(() => read(JSON.stringify({ data: [], next: big }), { rootKey: 'data', keep: 'next', maxRecordBytes: 1000 }, 256)).toThrow(/record at next larger than/);
    expect(read(JSON.stringify({ junk: [big, { big }], data: [1] }), { rootKey: 'data', maxRecordBytes: 1000 }, 256).rows).toEqual([1]);
  });
});

describe('NDJSON and lines', () => {
  it('splits lines across chunks, drops \\r, fails on a line past the cap before holding it', () => {
    const r = new NdjsonReader(100);
    const text = Buffer.from('{"a":1}\r\n\n{"a":2}\n{"a":3}');
    const out: unknown[] = [];
    for (let i = 0; i < text.length; i += 3) out.push(...r.write(text.subarray(i, i + 3)));
    out.push(...r.end());
    expect(out).toEqual([{ a: 1 }, { a: 2 }, { a: 3 }]);
    const lines = new LineSplitter(10);
    expect(lines.write(Buffer.from('0123456789\n'))).toEqual(['0123456789']);
    expect(() => lines.write(Buffer.from('01234567890'))).toThrow('record on line 2 larger than BI_RUN_MAX_RECORD_BYTES (10 bytes)');
    expect(() => new NdjsonReader(100).write(Buffer.from('{"secret": s3cr3t}\n'))).toThrow(/^line 1 is not JSON$/);
  });
});
