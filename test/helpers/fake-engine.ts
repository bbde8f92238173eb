import type { EngineInput, EngineResult, PipelineEngine, RejectedRow, StepProgress } from '../../controller/runs/types.ts';

export interface FakeEngineOptions {
  /** Rows the source step reads. */
  rows?: number;
  /** Rows each non-source step rejects (reported one by one through onReject). */
  rejectsPerStep?: number;
  /** Fail at this step index with this message. */
  failAt?: { index: number; error: string };
  /** Hold every run until `release(runId)` or its signal aborts (cancel tests). */
  hold?: boolean;
}

/**
 * A deterministic engine for lifecycle tests: reports every step running then succeeded, with
 * counts that add up (rowsIn = previous rowsOut), rejects and a log line per step. With `hold`,
 * a run waits for release or abort; an aborted run answers `cancelled` and writes nothing.
 */
export class FakeEngine implements PipelineEngine {
  readonly inputs: EngineInput[] = [];
  readonly #gates = new Map<string, () => void>();
  readonly #started = new Map<string, () => void>();
  constructor(public opts: FakeEngineOptions = {}) {}

  release(runId: string): void {
    this.#gates.get(runId)?.();
  }

  /** Resolves once the engine has been called for `runId`. */
  started(runId: string): Promise<void> {
    if (this.inputs.some((i) => i.runId === runId)) return Promise.resolve();
    return new Promise((resolve) => this.#started.set(runId, resolve));
  }

  async run(input: EngineInput): Promise<EngineResult> {
    this.inputs.push(input);
    this.#started.get(input.runId)?.();
    const { hooks, signal } = input;
    const rows = this.opts.rows ?? 3;
    const steps: StepProgress[] = input.steps.map((s) => ({ stepId: s.id, type: s.type, name: s.name, status: 'pending', rowsIn: 0, rowsOut: 0, rowsRejected: 0, durationMs: 0, message: null }));
    hooks.onLog('info', `run ${input.runId} started`);
    if (this.opts.hold) {
      hooks.onStep({ ...steps[0], status: 'running' });
      await new Promise<void>((resolve) => {
        this.#gates.set(input.runId, resolve);
        signal.addEventListener('abort', () => resolve());
      });
    }
    if (signal.aborted) {
      return { status: 'cancelled', rowsRead: 0, rowsWritten: 0, rowsRejected: 0, error: 'cancelled', steps: steps.map((s, i) => (i === 0 ? { ...s, status: 'failed' } : { ...s, status: 'skipped' })) };
    }
    let flowing = rows;
    let rejected = 0;
    for (const [i, step] of steps.entries()) {
      if (this.opts.failAt?.index === i) {
        step.status = 'failed';
        step.message = this.opts.failAt.error;
        hooks.onStep({ ...step });
        hooks.onLog('error', `${step.name}: ${this.opts.failAt.error}`);
        for (const later of steps.slice(i + 1)) later.status = 'skipped';
        return { status: 'failed', rowsRead: rows, rowsWritten: 0, rowsRejected: rejected, error: `${step.name}: ${this.opts.failAt.error}`, steps };
      }
      hooks.onStep({ ...step, status: 'running' });
      step.rowsIn = i === 0 ? 0 : flowing;
      const rejects = i === 0 ? 0 : Math.min(flowing, this.opts.rejectsPerStep ?? 0);
      for (let r = 0; r < rejects; r++) {
        const reject: RejectedRow = { step: step.stepId, row: { id: r, step: i }, reasons: [`row ${r} refused by ${step.name}`] };
        hooks.onReject(reject);
      }
      rejected += rejects;
      flowing -= rejects;
      Object.assign(step, { status: 'succeeded', rowsOut: flowing, rowsRejected: rejects, durationMs: 1 });
      if (i === 0) step.rowsOut = rows;
      hooks.onStep({ ...step });
      hooks.onLog('info', `${step.name}: ${step.rowsOut} rows`);
    }
    return { status: 'succeeded', rowsRead: rows, rowsWritten: flowing, rowsRejected: rejected, error: null, steps };
  }
}
