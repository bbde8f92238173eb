import { formatProblem } from '../../errors.ts';
import { table } from '../io.ts';
import type { CommandContext } from '../context.ts';
import { withRuntime } from './oneshot.ts';

export function registerDiff(ctx: CommandContext): void {
  ctx.program
    .command('diff')
    .description('show what a sync would create, update and prune (changes nothing)')
    .action(async () => {
      await withRuntime(ctx, async (rt) => {
        const plan = await rt.plan();
        const changes = plan.filter((p) => p.action !== 'unchanged');
        if (changes.length === 0) return ctx.io.out('no changes');
        ctx.io.out(
          table(
            ['ACTION', 'OBJECT', 'PATH', 'PROBLEMS'],
            changes.map((p) => [p.action, p.key, p.path ?? '', (p.problems ?? []).map(formatProblem).join('; ')]),
          ),
        );
        const n = (a: string) => changes.filter((p) => p.action === a).length;
        ctx.io.out(`${n('create')} to create, ${n('update')} to update, ${n('prune')} to prune, ${n('invalid')} invalid`);
      });
    });
}
