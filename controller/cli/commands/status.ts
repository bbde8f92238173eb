import { ValidationError } from '../../errors.ts';
import type { StatusRecord } from '../../reconciler/status.ts';
import { parseStatusFilter } from '../../reconciler/status-filter.ts';
import { table } from '../io.ts';
import type { CommandContext } from '../context.ts';
import { withRuntime } from './oneshot.ts';

const short = (rev: string | null) => (rev ? rev.slice(0, 12) : '');

/** Resource IDs in one cell: `clientId=ACME vdmIds=[2]`. */
export function formatResources(ids: StatusRecord['resourceIds']): string {
  return Object.entries(ids)
    .map(([k, v]) => (Array.isArray(v) ? `${k}=[${v.length}]` : v !== null && typeof v === 'object' ? `${k}={…}` : `${k}=${String(v)}`))
    .join(' ');
}

export function statusTable(rows: StatusRecord[]): string {
  return table(
    ['KIND', 'NAME', 'PHASE', 'ATTEMPTS', 'NEXT RETRY', 'APPLIED', 'ATTEMPTED', 'PATH', 'RESOURCES', 'MESSAGE'],
    rows.map((s) => [
      s.kind,
      s.name,
      s.phase,
      String(s.attempts),
      s.nextRetryAt ?? '',
      short(s.lastAppliedRevision),
      short(s.lastAttemptedRevision),
      s.path ?? '',
      formatResources(s.resourceIds),
      s.message.replace(/\s+/g, ' ').slice(0, 120),
    ]),
  );
}

export function registerStatus(ctx: CommandContext): void {
  ctx.program
    .command('status')
    .description('print the status of every manifest, from the store (kind, name, phase, revisions, retries, resources)')
    .option('--kind <kind>', 'only this kind (CoreModel, Connection, Client, Dashboard, Pipeline)')
    .option('--phase <phase>', 'only this phase (Pending, Synced, Failed, Invalid, Pruned)')
    .action(async (opts: { kind?: string; phase?: string }) => {
      await withRuntime(ctx, async (rt) => {
        let filter;
        try {
          filter = parseStatusFilter(opts, rt.reconciler.kinds);
        } catch (err) {
          if (!(err instanceof ValidationError)) throw err;
          ctx.io.err(`bictl status: ${err.message}`);
          return ctx.setCode(2);
        }
        if (rt.gitSource) {
          const rev = rt.gitSource.recordedRevision;
          ctx.io.out(`git ${rt.gitSource.repo.branch}: last synced revision ${rev ?? '(none yet)'}`);
        }
        const rows = rt.reconciler.listStatus(filter);
        if (rows.length === 0) return ctx.io.out('no manifests');
        ctx.io.out(statusTable(rows));
        const warned = rt.reconciler.warnings.all();
        for (const s of rows) for (const w of (s.path !== null && warned.get(s.path)) || []) ctx.io.err(`${s.path}: warning: ${w}`);
        const by = (p: string) => rows.filter((r) => r.phase === p).length;
        ctx.io.out(`${rows.length} manifests: ${by('Synced')} synced, ${by('Failed')} failed, ${by('Invalid')} invalid, ${by('Pending')} pending, ${by('Pruned')} pruned`);
      });
    });
}
