import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NumberSpill, kthSmallest } from '../../../../controller/runs/engine/spill.ts';
import { QualityStep } from '../../../../controller/runs/engine/steps/quality.ts';
import { runStep } from './harness.ts';

const tmp = mkdtempSync(join(tmpdir(), 'bi-quality-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('quality step', () => {
  it('deduplicate keeps the first row of each key in source order, across batches, rejecting the rest with a reason', async () => {
    const step = new QualityStep({ rules: [{ field: 'id', rule: 'deduplicate', params: { keys: ['id', 'day'] } }] }, { tmpDir: tmp });
    const { out, rejects } = await runStep(step, [
      [{ id: 1, day: 'a', v: 'first' }, { id: 1, day: 'b', v: 'other key' }],
      [{ id: 1, day: 'a', v: 'second' }, { id: '1', day: 'a', v: 'string id is another key' }],
    ]);
    expect(out.map((r) => r.v)).toEqual(['first', 'other key', 'string id is another key']);
    expect(rejects).toEqual([{ row: { id: 1, day: 'a', v: 'second' }, reasons: ['deduplicate: id = 1, day = "a" is a duplicate of an earlier row'] }]);
  });

  it('outlier_detection zscore rejects values beyond threshold deviations; non-numbers are kept', async () => {
    const values = [10, 11, 9, 10, 12, 8, 10, 11, 9, 10, 500];
    const step = new QualityStep({ rules: [{ field: 'x', rule: 'outlier_detection', params: { method: 'zscore', threshold: 2 } }] }, { tmpDir: tmp });
    const { out, rejects } = await runStep(step, [values.slice(0, 5).map((x) => ({ x })), [...values.slice(5).map((x) => ({ x })), { x: null }, { x: 'n/a' }]]);
    expect(rejects.map((r) => r.row.x)).toEqual([500]);
    expect(rejects[0]?.reasons[0]).toMatch(/^outlier_detection: x = 500 has a z-score of 3\.16, above 2/);
    expect(out).toHaveLength(12);
  });

  it('outlier_detection iqr uses exact quartiles (linear interpolation)', async () => {
    // 14 values: Q1 = 2.25 (position 3.25), Q3 = 8.75 (position 9.75), IQR 6.5 → fences [-1, 12] with threshold 0.5
    const rows = [...Array.from({ length: 11 }, (_, i) => ({ x: i })), { x: 15 }, { x: 16 }, { x: -6 }];
    const step = new QualityStep({ rules: [{ field: 'x', rule: 'outlier_detection', params: { method: 'iqr', threshold: 0.5 } }] }, { tmpDir: tmp, quantileMemoryCap: 3 });
    const { rejects } = await runStep(step, [rows]);
    expect(rejects.map((r) => r.row.x)).toEqual([15, 16, -6]);
    expect(rejects[0]?.reasons).toEqual(['outlier_detection: x = 15 is outside [-1, 12] (Q1 2.25, Q3 8.75, iqr × 0.5)']);
  });

  it('kthSmallest is exact with a memory cap far below the count (histogram narrowing)', async () => {
    const spill = new NumberSpill(join(tmp, 'values.bin'));
    const values = Float64Array.from({ length: 20_000 }, (_, i) => Math.sin(i) * 1000 + (i % 7));
    await spill.append(values);
    await spill.finish();
    const sorted = Float64Array.from(values).sort();
    for (const k of [0, 1, 4999, 10_000, 19_999]) expect(await kthSmallest(spill, k, 100, 16)).toBe(sorted[k]);
  });

  it('completeness_check fails below the threshold (per field) and passes rows unchanged at or above it', async () => {
    const rows = [{ a: 1, b: null }, { a: 2, b: 1 }, { a: null, b: 2 }, { a: 4, b: 3 }];
    const pass = new QualityStep({ rules: [{ field: 'a', rule: 'completeness_check', params: { threshold: 0.75 } }] }, { tmpDir: tmp });
    expect((await runStep(pass, [rows])).out).toEqual(rows);
    const fail = new QualityStep({ rules: [{ field: 'a', rule: 'completeness_check', params: { threshold: 0.8, fields: ['a', 'b'] } }] }, { tmpDir: tmp });
    await expect(runStep(fail, [rows])).rejects.toThrow('completeness_check: a is 75% complete, b is 75% complete, below the threshold 80%');
  });
});
