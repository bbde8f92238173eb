import { describe, expect, it } from 'vitest';
import { textParser } from '../../../../controller/runs/engine/connections.ts';
import { compileBatchEncoder, isoDay } from '../../../../controller/runs/engine/load/copy-text.ts';
import { compileRowDecoder, unescapeCopyText, wholeLines } from '../../../../controller/runs/engine/sources/copy-rows.ts';
import type { Row } from '../../../../controller/runs/types.ts';

// PostgreSQL type OIDs: int4, text, numeric, timestamp, date, bool, jsonb, int8, varchar
const OIDS = { int4: 23, text: 25, numeric: 1700, timestamp: 1114, date: 1082, bool: 16, jsonb: 3802, int8: 20, varchar: 1043 };

function decoderOf(columns: [string, number][]) {
  return compileRowDecoder(
    columns.map(([n]) => n),
    columns.map(([, oid]) => oid),
  );
}

function decodeAll(text: string, columns: [string, number][], max = 1000): Row[] {
  const out: Row[] = [];
  let pos = 0;
  while (pos < text.length) pos = decoderOf(columns)(text, pos, out, max);
  return out;
}

describe('COPY text decoding (source rows)', () => {
  it('reads \\N as null and undoes the escapes of backslash, tab, newline, CR and the rest; unicode passes', () => {
    const rows = decodeAll('1\ta\\\\b\\tc\\nd\\re\\b\\f\\v\n2\t\\N\n3\t\\\\N\n4\tünï 😀 \\\\\n5\t\n', [
      ['id', OIDS.int4],
      ['t', OIDS.text],
    ]);
    expect(rows).toEqual([
      { id: 1, t: 'a\\b\tc\nd\re\b\f\v' },
      { id: 2, t: null },
      { id: 3, t: '\\N' },
      { id: 4, t: 'ünï 😀 \\' },
      { id: 5, t: '' },
    ]);
  });

  it('parses numeric, timestamp (as UTC, milliseconds), date (UTC midnight), bool, jsonb and int8 per column', () => {
    const columns: [string, number][] = [
      ['num', OIDS.numeric],
      ['ts', OIDS.timestamp],
      ['day', OIDS.date],
      ['ok', OIDS.bool],
      ['doc', OIDS.jsonb],
      ['big', OIDS.int8],
    ];
    const rows = decodeAll(
      '12.50\t2026-05-06 07:08:09.123456\t2026-02-28\tt\t{"a": [1, "x\\\\ty"]}\t9007199254740993\n' +
        '-0.001\t2026-05-06 00:00:00\t0050-01-02\tf\t[true]\t-5\n' +
        '123456789012345678.5\t2026-05-06 07:08:09.5\tinfinity\t\\N\tnull\t42\n',
      columns,
    );
    // the jsonb text holds the JSON escape \t, its backslash doubled by COPY: the value has a tab
    expect(rows[0]).toEqual({ num: 12.5, ts: new Date('2026-05-06T07:08:09.123Z'), day: new Date('2026-02-28T00:00:00Z'), ok: true, doc: { a: [1, 'x\ty'] }, big: 9007199254740993n });
    expect(rows[1]).toEqual({ num: -0.001, ts: new Date('2026-05-06T00:00:00Z'), day: new Date('0050-01-02T00:00:00Z'), ok: false, doc: [true], big: -5 });
    // numeric beyond 15 significant digits stays text (exact); a date JavaScript cannot hold stays text
    expect(rows[2]).toEqual({ num: '123456789012345678.5', ts: new Date('2026-05-06T07:08:09.500Z'), day: 'infinity', ok: null, doc: null, big: 42 });
  });

  it('integers and dates read in place answer what their parsers answer (parseInt, the date parser)', () => {
    const cells = ['0', '-0', '7', '-2147483648', '2147483647', '99999999999', '-', '12a', '\\N', '+5'];
    const dates = ['2026-02-28', '0050-01-02', '2026-1-1', 'infinity', '\\N', '2026-13-01', '12345-01-01'];
    const rows = decodeAll(cells.map((c, i) => `${c}\t${dates[i % dates.length]}\n`).join(''), [
      ['n', OIDS.int4],
      ['d', OIDS.date],
    ]);
    const parse = (oid: number, v: string): unknown => (v === '\\N' ? null : textParser(oid)(v));
    expect(rows).toEqual(cells.map((c, i) => ({ n: parse(OIDS.int4, c), d: parse(OIDS.date, dates[i % dates.length] as string) })));
  });

  it('answers what cell-by-cell decoding answers wherever \\N and escapes stand in a line (raw cells keep their text)', () => {
    const names = ['i', 't', 'r', 'd', 'n', 'last'];
    const oids = [OIDS.int4, OIDS.text, OIDS.text, OIDS.date, OIDS.numeric, OIDS.varchar];
    const raw = [false, false, true, false, false, true];
    const cells = ['\\N', '', 'x', 'a\\tb', '\\\\N', 'ü\\\\', '12', '2026-01-02', '1.50', 'plain text of some length', '\\n'];
    // every cell value in every column, next to lines without a backslash
    const lines: string[][] = [];
    for (let k = 0; k < cells.length * names.length; k++) lines.push(names.map((_, c) => (cells[(k + c * (k % 3)) % cells.length] as string)), names.map(() => '7'));
    const text = lines.map((l) => `${l.join('\t')}\n`).join('');
    const reference = lines.map((l) =>
      Object.fromEntries(l.map((cell, c) => [names[c], cell === '\\N' ? null : raw[c] ? cell : textParser(oids[c] as number)(unescapeCopyText(cell))])),
    );
    const decode = compileRowDecoder(names, oids, raw);
    for (const max of [1, 7, 1000]) {
      const out: Row[] = [];
      let pos = 0;
      while (pos < text.length) pos = decode(text, pos, out, out.length + max);
      expect(out).toEqual(reference);
    }
  });

  it('stops at max rows and resumes where it stopped; every row has the columns in order', () => {
    const decode = decoderOf([
      ['a', OIDS.int4],
      ['b', OIDS.varchar],
    ]);
    const text = '1\tx\n2\ty\n3\tz\n';
    const first: Row[] = [];
    const pos = decode(text, 0, first, 2);
    expect(first).toEqual([
      { a: 1, b: 'x' },
      { a: 2, b: 'y' },
    ]);
    const rest: Row[] = [];
    expect(decode(text, pos, rest, 2)).toBe(text.length);
    expect(rest).toEqual([{ a: 3, b: 'z' }]);
    expect(Object.keys(first[0] as Row)).toEqual(['a', 'b']);
  });

  it('column names are data, never code; __proto__ is an own field, not the prototype', () => {
    const names: [string, number][] = [
      ['"); throw 1; ("', OIDS.text],
      ['__proto__', OIDS.text],
      ['a\u2028b', OIDS.int4],
    ];
    const [row] = decodeAll('x\ty\t7\n', names);
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(row, '__proto__')?.value).toBe('y');
    expect((row as Row)['"); throw 1; ("']).toBe('x');
    expect((row as Row)['a\u2028b']).toBe(7);
    const [plain] = decodeAll('x\t7\n', [names[0] as [string, number], names[2] as [string, number]]);
    expect(plain).toEqual({ '"); throw 1; ("': 'x', 'a\u2028b': 7 });
  });

  it('round-trips through the load encoder: what is decoded encodes back to the same COPY text', () => {
    const text = '1\ta\\\\b\\tc\\nd\\re\t2026-03-04\tt\n2\t\\N\t\\N\tf\n';
    const rows = decodeAll(text, [
      ['id', OIDS.int4],
      ['note', OIDS.text],
      ['day', OIDS.date],
      ['ok', OIDS.bool],
    ]);
    expect(compileBatchEncoder(['id', 'note', 'day', 'ok'], ['integer', 'text', 'date', 'boolean'])(rows, new Float64Array(4)).toString('utf8')).toBe(text);
  });

  it('isoDay writes a date as toISOString().slice(0, 10) does, for every year', () => {
    for (const t of [0, 1e12, -1e13, Date.UTC(999, 0, 1), Date.UTC(1000, 0, 1), Date.UTC(9999, 11, 31, 23, 59), Date.UTC(10000, 0, 1), Date.UTC(-50, 5, 5), Date.UTC(2024, 1, 29)]) {
      const d = new Date(t);
      expect(isoDay(d)).toBe(d.toISOString().slice(0, 10));
    }
  });

  it('wholeLines answers whole lines whatever the chunk boundaries, also inside a UTF-8 character', async () => {
    const lines = ['1\tünï 😀\n', '2\t\\N\n', '\n', `3\t${'x'.repeat(300)}\n`, '4\té\n'];
    const bytes = Buffer.from(lines.join(''));
    async function* cut(sizes: number[]): AsyncIterable<Buffer> {
      let at = 0;
      for (let i = 0; at < bytes.length; i++) {
        const size = sizes[i % sizes.length] as number;
        yield bytes.subarray(at, at + size);
        at += size;
      }
    }
    for (const sizes of [[bytes.length], [1], [2], [3, 5], [7, 1, 300], [13], [64]]) {
      const texts: string[] = [];
      for await (const t of wholeLines(cut(sizes))) texts.push(t);
      expect([sizes, texts.join('')]).toEqual([sizes, lines.join('')]);
      for (const t of texts) expect(t.endsWith('\n')).toBe(true);
    }
  });
});
