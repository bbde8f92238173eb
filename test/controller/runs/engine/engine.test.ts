import { afterEach, describe, expect, it } from 'vitest';
import { filesFolder, runEngine, steps } from './harness.ts';

const CSV = 'id,email,amount\n1,a@x.io,10\n2,bad,20\n3,c@x.io,abc\n4,d@x.io,40\n';
let cleanup: () => void = () => {};
afterEach(() => cleanup());

function folder(files: Record<string, string>): string {
  const f = filesFolder(files);
  cleanup = f.cleanup;
  return f.dir;
}

describe('StreamingPipelineEngine (file source, no destination)', () => {
  it('counts add up: rowsIn = previous rowsOut, rowsOut = rowsIn − rowsRejected, run totals are the sums', async () => {
    const dir = folder({ 'orders.csv': CSV });
    const { result, rejects } = await runEngine({
      filesDir: dir,
      steps: steps(
        ['source', { connectionId: 'C1', path: 'orders.csv' }],
        ['transform', { rules: [{ field: 'amount', rule: 'to_integer' }, { field: 'id', rule: 'to_integer' }] }],
        ['validate', { rules: [{ field: 'email', rule: 'email' }] }],
      ),
    });
    expect(result.status).toBe('succeeded');
    expect(result.steps.map((s) => [s.status, s.rowsIn, s.rowsOut, s.rowsRejected])).toEqual([
      ['succeeded', 4, 4, 0],
      ['succeeded', 4, 3, 1],
      ['succeeded', 3, 2, 1],
    ]);
    expect(result).toMatchObject({ rowsRead: 4, rowsRejected: 2, rowsWritten: 2, error: null });
    expect(rejects).toEqual([
      { step: 'step-1-1', row: { id: '3', email: 'c@x.io', amount: 'abc' }, reasons: ['to_integer: amount = "abc" does not convert to an integer'] },
      { step: 'step-1-2', row: { id: 2, email: 'bad', amount: 20 }, reasons: ['email: email = "bad" is not an email address'] },
    ]);
  });

  it('reports pending → running → succeeded for every step, with counts per batch', async () => {
    const dir = folder({ 'n.ndjson': Array.from({ length: 5 }, (_, i) => JSON.stringify({ i })).join('\n') });
    const { progress } = await runEngine(
      { filesDir: dir, steps: steps(['source', { connectionId: 'C1', path: 'n.ndjson' }], ['validate', { rules: [] }]) },
      { batchSize: 2 },
    );
    const ofSource = progress.filter((p) => p.stepId === 'step-1-0');
    expect(ofSource[0]?.status).toBe('running');
    expect(ofSource.map((p) => p.rowsOut)).toContain(2);
    expect(ofSource.at(-1)).toMatchObject({ status: 'succeeded', rowsIn: 5, rowsOut: 5 });
  });

  it('a failing step fails the run naming it; later steps are skipped; never throws', async () => {
    const dir = folder({ 'o.csv': CSV });
    const { result } = await runEngine({
      filesDir: dir,
      steps: steps(
        ['source', { connectionId: 'C1', path: 'o.csv' }],
        ['quality', { rules: [{ field: 'email', rule: 'completeness_check', params: { threshold: 1 } }, { field: 'zip', rule: 'completeness_check', params: { threshold: 0.9 } }] }],
        ['validate', { rules: [] }],
      ),
    });
    expect(result.status).toBe('failed');
    expect(result.error).toBe('step quality-1 (step-1-1) failed: completeness_check: zip is 0% complete, below the threshold 90%');
    expect(result.steps.map((s) => s.status)).toEqual(['succeeded', 'failed', 'skipped']);
    expect(result.rowsWritten).toBe(0);
  });

  it('a bad step config fails that step before anything runs; the others are skipped', async () => {
    const { result } = await runEngine({
      steps: steps(['source', { connectionId: 'C1', path: 'x.csv' }], ['validate', { rules: [{ field: 'a', rule: 'regex', params: { pattern: '(?<=x)y' } }] }]),
    });
    expect(result.steps.map((s) => s.status)).toEqual(['skipped', 'failed']);
    expect(result.error).toMatch(/^step validate-1 \(step-1-1\) failed: config.rules\[0\].params.pattern/);
  });

  it('a file outside BI_PIPELINE_FILES_DIR fails the source step', async () => {
    const dir = folder({ 'a.csv': CSV });
    const { result } = await runEngine({ filesDir: dir, steps: steps(['source', { connectionId: 'C1', path: '../etc/passwd.csv' }]) });
    expect(result).toMatchObject({ status: 'failed', error: 'step source-0 (step-1-0) failed: file ../etc/passwd.csv must be a path inside BI_PIPELINE_FILES_DIR' });
  });

  it('an extra source step appends its rows to the stream at its position', async () => {
    const dir = folder({ 'a.csv': 'id\n1\n2\n', 'b.json': '[{"id":"3"}]' });
    const { result, rejects } = await runEngine({
      filesDir: dir,
      steps: steps(
        ['source', { connectionId: 'C1', path: 'a.csv' }],
        ['validate', { rules: [{ field: 'id', rule: 'regex', params: { pattern: '^3$' } }] }],
        ['source', { connectionId: 'C1', path: 'b.json' }],
        ['transform', { rules: [{ field: 'id', rule: 'to_integer' }] }],
      ),
    });
    expect(result.steps.map((s) => [s.rowsIn, s.rowsOut, s.rowsRejected])).toEqual([
      [2, 2, 0],
      [2, 0, 2],
      [1, 1, 0],
      [1, 1, 0],
    ]);
    expect(result).toMatchObject({ status: 'succeeded', rowsRead: 3, rowsRejected: 2, rowsWritten: 1 });
    expect(rejects).toHaveLength(2);
  });

  it('a cancel stops the run: status cancelled, unfinished steps skipped', async () => {
    const dir = folder({ 'n.ndjson': Array.from({ length: 50 }, (_, i) => JSON.stringify({ i })).join('\n') });
    const ac = new AbortController();
    const { result } = await runEngine(
      {
        filesDir: dir,
        signal: ac.signal,
        hooks: undefined,
        steps: steps(['source', { connectionId: 'C1', path: 'n.ndjson' }], ['validate', { rules: [] }]),
      },
      { batchSize: 5, clock: (() => { let n = 0; return () => { if (++n === 6) ac.abort(); return n; }; })() },
    );
    expect(result.status).toBe('cancelled');
    expect(result.error).toBeNull();
    expect(result.steps.every((s) => s.status === 'skipped' && s.message === 'cancelled')).toBe(true);
  });
});
