import { describe, expect, it } from 'vitest';
import { fieldsTouched } from '../../../../controller/runs/engine/engine.ts';
import { type ColumnKind, type Family, kindOf, widen } from '../../../../controller/runs/engine/load/columns.ts';
import { compileBatchEncoder } from '../../../../controller/runs/engine/load/copy-text.ts';
import { RawCells } from '../../../../controller/runs/engine/raw-cells.ts';
import { compileRowDecoder } from '../../../../controller/runs/engine/sources/copy-rows.ts';
import type { RunScope } from '../../../../controller/runs/engine/step.ts';
import { SourceStep } from '../../../../controller/runs/engine/steps/source.ts';
import { TableWriteStep } from '../../../../controller/runs/engine/steps/load.ts';
import { TransformStep } from '../../../../controller/runs/engine/steps/transform.ts';
import { ValidateStep } from '../../../../controller/runs/engine/steps/validate.ts';
import type { Row } from '../../../../controller/runs/types.ts';

// PostgreSQL type OIDs
const INT4 = 23;
const TEXT = 25;
const NUMERIC = 1700;
const DATE = 1082;
const BOOL = 16;

describe('raw cells: a PostgreSQL source\'s COPY text passed to the load untouched', () => {
  it('the decoder keeps a raw column\'s text with its escapes (\\N is null); the others are parsed', () => {
    const decode = compileRowDecoder(['id', 'note', 'amount'], [INT4, TEXT, NUMERIC], [false, true, true]);
    const rows: Row[] = [];
    decode('1\ta\\tb\t12.50\n2\t\\N\t\\N\n', 0, rows, 10);
    expect(rows).toEqual([
      { id: 1, note: 'a\\tb', amount: '12.50' },
      { id: 2, note: null, amount: null },
    ]);
  });

  it('the encoder copies a passing column as it is and parses one that does not pass, before its type\'s encoding', () => {
    const encode = compileBatchEncoder(['note', 'amount', 'day'], ['text', 'numeric', 'timestamptz'], ['pass', (v) => RawCells.parse(NUMERIC, v), (v) => RawCells.parse(DATE, v)]);
    const nonNull = new Float64Array(3);
    expect(encode([{ note: 'a\\tb', amount: '12.50', day: '2026-01-02' }, { note: null, amount: null, day: null }], nonNull).toString()).toBe(
      'a\\tb\t12.5\t2026-01-02T00:00:00.000Z\n\\N\t\\N\t\\N\n',
    );
    expect([...nonNull]).toEqual([1, 1, 1]);
  });

  it('text passes only where it stores the same value', () => {
    expect(RawCells.passes(INT4, 'bigint')).toBe(true);
    expect(RawCells.passes(INT4, 'text')).toBe(true);
    expect(RawCells.passes(NUMERIC, 'double precision')).toBe(true);
    expect(RawCells.passes(NUMERIC, 'numeric')).toBe(false); // '12.50' keeps a scale the parsed 12.5 does not
    expect(RawCells.passes(NUMERIC, 'integer')).toBe(false); // '5.00' is no integer literal
    expect(RawCells.passes(DATE, 'date')).toBe(true);
    expect(RawCells.passes(DATE, 'timestamptz')).toBe(false); // read in the session's time zone, not UTC
    expect(RawCells.passes(TEXT, 'jsonb')).toBe(false);
    expect(RawCells.passes(TEXT, 'integer')).toBe(true);
  });

  it('claims only untouched columns of the types it knows, once enabled; rejected rows are recorded parsed', () => {
    const raw = new RawCells();
    expect(raw.claim('note', TEXT)).toBe(false);
    raw.enable(['id']);
    expect([raw.claim('id', INT4), raw.claim('note', TEXT), raw.claim('ok', BOOL), raw.claim('day', DATE)]).toEqual([false, true, false, true]);
    expect(raw.materialize({ id: 1, note: 'a\\nb', ok: true, day: '2026-01-02' })).toEqual({ id: 1, note: 'a\nb', ok: true, day: new Date('2026-01-02T00:00:00Z') });
    expect(RawCells.kindOf(DATE, 'infinity')).toBe('text');
    expect(RawCells.kindOf(NUMERIC, '5.00')).toBe('integer');
  });

  it('a run passes raw cells only when every step after the source names its fields', () => {
    const scope = { sourceType: 'database', rawCells: new RawCells() } as unknown as RunScope;
    const source = new SourceStep({ connectionId: 'C' }, scope, { sleep: async () => {} }, true);
    const transform = new TransformStep({ fieldMappings: [{ source: 'a', target: 'b' }], rules: [{ field: 'c', rule: 'trim' }] });
    const validate = new ValidateStep({ rules: [{ field: 'd', rule: 'not_null' }] });
    const load = new TableWriteStep('load', { tableName: 't' }, scope);
    expect(fieldsTouched([source, transform, validate, load])).toEqual(['a', 'b', 'c', 'd']);
    expect(fieldsTouched([transform, load])).toBeUndefined();
    expect(fieldsTouched([source, { run: (input) => input }, load])).toBeUndefined();
  });
});

describe('raw cells: the kind of a cell without parsing it', () => {
  it('the quick tests of the schema check pass only cells that keep a created column\'s kind or fit an existing column', () => {
    const cells = ['0', '-5', '12.50', '123456789.5', '1234567890.5', '1e5', '2026-01-02', '2026-1-2', 'infinity', 'x', '', '\\N', '9999999999'];
    const kinds: ColumnKind[] = ['integer', 'bigint', 'double precision', 'numeric', 'date', 'timestamptz', 'text'];
    const families: Family[] = ['number', 'integer', 'temporal', 'text', 'json', 'boolean'];
    for (const oid of [INT4, 21, NUMERIC, DATE, TEXT]) {
      for (const cell of cells) {
        for (const k of kinds) if (RawCells.settledKind(oid, k)(cell)) expect([oid, cell, k, widen(k, RawCells.kindOf(oid, cell, k))]).toEqual([oid, cell, k, k]);
        for (const f of families) if (RawCells.settledFamily(oid, f)(cell)) expect([oid, cell, f, RawCells.fits(oid, cell, f)]).toEqual([oid, cell, f, true]);
      }
    }
    expect([RawCells.settledKind(INT4, 'integer')('7'), RawCells.settledKind(NUMERIC, 'double precision')('12.50'), RawCells.settledKind(DATE, 'date')('2026-01-02')]).toEqual([true, true, true]);
  });

  it('gives the kind the parsed value would widen the column to', () => {
    for (const text of ['12.50', '-0.01', '123456789.5', '5', '999999999', '1234567890', '12345678901234567', 'NaN', 'Infinity', '-']) {
      const parsed = RawCells.kindOf(NUMERIC, text);
      expect([text, widen('double precision', RawCells.kindOf(NUMERIC, text, 'double precision'))]).toEqual([text, widen('double precision', parsed)]);
    }
    for (const text of ['2026-01-02', '0050-01-01', 'infinity', '0044-03-15 BC']) {
      expect([text, RawCells.kindOf(DATE, text)]).toEqual([text, kindOf(RawCells.parse(DATE, text))]);
    }
  });
});
