import { findPipelineId } from '../../kinds/pipeline/store.ts';
import type { RunView } from '../../runs/store.ts';
import type { StepProgress } from '../../runs/types.ts';
import type { CommandContext } from '../context.ts';
import { withRuntime } from './oneshot.ts';

const HEADERS = ['STEP', 'TYPE', 'STATUS', 'ROWS IN', 'ROWS OUT', 'REJECTED', 'MS'];
const cells = (s: StepProgress) => [s.name, s.type, s.status, String(s.rowsIn), String(s.rowsOut), String(s.rowsRejected), String(s.durationMs)];
const WIDTHS = [24, 10, 9, 10, 10, 10, 8];
/** One step as a line of the table printed as the run goes (fixed widths: lines align without the whole table). */
export const stepLine = (s: StepProgress) =>
  cells(s)
    .map((c, i) => (i < 3 ? c.slice(0, WIDTHS[i]).padEnd(WIDTHS[i]) : c.padStart(WIDTHS[i])))
    .join('  ')
    .trimEnd();
const headerLine = () =>
  HEADERS.map((h, i) => (i < 3 ? h.padEnd(WIDTHS[i]) : h.padStart(WIDTHS[i])))
    .join('  ')
    .trimEnd();

export function runSummary(run: RunView): string {
  return `${run.runId} ${run.status}: ${run.rowsRead} read, ${run.rowsWritten} written, ${run.rowsRejected} rejected${run.durationMs !== null ? ` in ${run.durationMs} ms` : ''}`;
}

/**
 * `bictl run <pipeline> [--wait]`: runs a pipeline now (trigger `cli`) in this process, against
 * the store — whether or not a server runs. The store lets only one run per pipeline be active
 * across both, and a cancel through the API reaches this process through the store.
 */
export function registerRun(ctx: CommandContext): void {
  ctx.program
    .command('run')
    .description('run a pipeline now (by pipeline ID or manifest name); exits 0 only when the run succeeded')
    .argument('<pipeline>', 'pipeline ID (DP-…) or the name of its manifest')
    .option('--wait', 'print the step table as the run goes')
    .action(async (ref: string, opts: { wait?: boolean }) => {
      await withRuntime(ctx, async (rt) => {
        const pipelineId = findPipelineId(rt.db, ref);
        if (!pipelineId) {
          ctx.io.err(`bictl run: no pipeline ${ref} (give its ID or its manifest name; bictl sync applies the manifests first)`);
          return ctx.setCode(2);
        }
        const { dispatcher, store } = rt.runs;
        let run: RunView;
        try {
          run = await dispatcher.start(pipelineId, 'cli', null);
        } catch (err) {
          ctx.io.err(`bictl run: ${(err as Error).message}`);
          return ctx.setCode(1);
        }
        ctx.io.out(`${run.runId} started for ${pipelineId}`);
        const printed = new Map<string, string>();
        const print = () => {
          const now = store.get(run.runId);
          for (const s of now?.steps ?? []) {
            const line = stepLine(s);
            if (printed.get(s.stepId) === line || s.status === 'pending') continue;
            if (printed.size === 0) ctx.io.out(headerLine());
            printed.set(s.stepId, line);
            ctx.io.out(line);
          }
        };
        const onProgress = (runId: string) => {
          if (runId === run.runId && opts.wait) print();
        };
        const interrupt = () => void dispatcher.cancel(run.runId).catch(() => undefined);
        dispatcher.on('progress', onProgress);
        process.once('SIGINT', interrupt);
        try {
          const done = await dispatcher.wait(run.runId);
          if (opts.wait) print();
          ctx.io.out(runSummary(done));
          if (done.status !== 'succeeded') {
            ctx.io.err(`bictl run: ${done.runId} ${done.status}${done.error ? `: ${done.error}` : ''}`);
            ctx.setCode(1);
          }
        } finally {
          dispatcher.off('progress', onProgress);
          process.off('SIGINT', interrupt);
        }
      });
    });
}
