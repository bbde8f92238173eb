import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkerThreadEngine } from '../../../controller/runs/thread-engine.ts';
import type { EngineInput, LogLevel, RejectedRow, StepProgress } from '../../../controller/runs/types.ts';

const dir = mkdtempSync(join(tmpdir(), 'bi-thread-engine-'));
writeFileSync(join(dir, 'orders.csv'), 'id,email\n1,a@x.io\n2,bad\n3,c@x.io\n');
mkdirSync(join(dir, 'ACME'));
writeFileSync(join(dir, 'ACME', 'orders.csv'), 'id,email\n7,acme@x.io\n');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function input(overrides: Partial<EngineInput> = {}) {
  const seen = { steps: [] as StepProgress[], rejects: [] as RejectedRow[], logs: [] as [LogLevel, string][], resolved: [] as string[] };
  const value: EngineInput = {
    runId: 'RUN-1',
    pipelineId: 'DP-1',
    source: { connectionId: 'F1', type: 'file' },
    destination: { connectionId: 'F1', type: 'database', vendor: 'POSTGRESQL' },
    steps: [
      { id: 'step-1-0', type: 'source', name: 'Source', config: { connectionId: 'F1', path: 'orders.csv', format: 'csv' } },
      { id: 'step-1-1', type: 'validate', name: 'Validate', config: { rules: [{ field: 'email', rule: 'email' }] } },
    ],
    connections: {
      resolve: (id) => {
        seen.resolved.push(id);
        if (id !== 'F1') throw new Error(`Connection ${id} not found`);
        return { connectionId: 'F1', vendor: 'POSTGRESQL' };
      },
    },
    egress: { check: async () => undefined, endpoint: async () => [] },
    filesDir: dir,
    signal: new AbortController().signal,
    hooks: { onStep: (p) => seen.steps.push(p), onReject: (r) => seen.rejects.push(r), onLog: (l, m) => seen.logs.push([l, m]) },
    now: () => new Date(),
    ...overrides,
  };
  return { value, seen };
}

describe('WorkerThreadEngine', () => {
  const engine = new WorkerThreadEngine({ egress: { listen: { host: '127.0.0.1', port: 1 } } });

  it('runs the streaming engine in a worker thread and reports its hooks back', async () => {
    const { value, seen } = input();
    const result = await engine.run(value);
    expect(result).toMatchObject({ status: 'succeeded', rowsRead: 3, rowsRejected: 1, error: null });
    expect(result.steps.map((s) => [s.status, s.rowsIn, s.rowsOut, s.rowsRejected])).toEqual([
      ['succeeded', 3, 3, 0],
      ['succeeded', 3, 2, 1],
    ]);
    expect(seen.rejects).toEqual([{ step: 'step-1-1', row: { id: '2', email: 'bad' }, reasons: ['email: email = "bad" is not an email address'] }]);
    expect(seen.steps.length).toBeGreaterThan(0);
    expect(seen.logs.length).toBeGreaterThan(0);
    expect(seen.resolved).toEqual(['F1']);
  });

  it('the pipeline’s owner crosses into the worker: an owned pipeline reads its client’s folder', async () => {
    const { value } = input({ owner: 'ACME' });
    expect(await engine.run(value)).toMatchObject({ status: 'succeeded', rowsRead: 1, rowsRejected: 0 });
  });

  it('the source limits reach the worker (BI_RUN_MAX_RECORD_BYTES from the controller configuration)', async () => {
    const small = new WorkerThreadEngine({ egress: { listen: { host: '127.0.0.1', port: 1 } }, limits: { maxResponseBytes: 1024, maxRecordBytes: 4 } });
    const { value } = input();
    const result = await small.run(value);
    expect(result.error).toBe('step Source (step-1-0) failed: record on line 1 larger than BI_RUN_MAX_RECORD_BYTES (4 bytes)');
  });

  it('an aborted signal ends the run cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    const { value } = input({ signal: controller.signal });
    expect((await engine.run(value)).status).toBe('cancelled');
  });

  it('a connection the pipeline may not use fails the step that asks for it, with the resolver’s message', async () => {
    const { value } = input();
    value.steps[0].config.connectionId = 'D-OTHER';
    const result = await engine.run(value);
    expect(result.status).toBe('failed');
    expect(result.error).toContain('Connection D-OTHER not found');
  });
});
