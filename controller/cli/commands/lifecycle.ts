import { userInfo } from 'node:os';
import type { Principal } from '../../auth/principal.ts';
import { verifyAudit } from '../../audit/log.ts';
import { normalizeClientId } from '../../kinds/client/rules.ts';
import { openStore } from '../../store/db.ts';
import { ownedMessage, storeOwner } from '../../store/owner.ts';
import { ClientLifecycle } from '../../usecases/client-lifecycle.ts';
import { OffboardClient } from '../../usecases/offboard-client.ts';
import type { CommandContext } from '../context.ts';
import { commandConfig } from './config.ts';
import { withRuntime } from './oneshot.ts';

/** Who a local command acts as: the audit log records it as actor `cli` (the OS user). */
export function cliPrincipal(): Principal {
  let name = 'cli';
  try {
    name = userInfo().username || 'cli';
  } catch {
    // No passwd entry (a container): `cli` it is.
  }
  return { userId: `cli:${name}`, username: name, role: 'admin', via: 'session' };
}

/**
 * One store, one writer (docs/contract/design.md): these commands write a Client manifest and
 * reconcile it, so while a server (or a `bictl sync`) owns the store they refuse instead of
 * racing its reconciler; the server's API does the same change. True when this process may go on.
 */
function refuseWhenOwned(ctx: CommandContext, verb: string): boolean {
  const owner = storeOwner(commandConfig(ctx).dataDir);
  if (!owner) return true;
  const api = `POST ${owner.url ?? ''}/v1/bi/admin/clients/<clientId>/${verb}/<userId> as an admin`;
  ctx.io.err(ownedMessage(owner, owner.role === 'serve' ? `${verb} through it (${api}), or stop it and run bictl clients ${verb} again` : 'wait for it to finish'));
  ctx.setCode(1);
  return false;
}

/**
 * `bictl clients suspend|resume|offboard|restore|purge <ID>`: thin calls of the use cases the
 * API runs (the manifest written through the one write path), and `bictl audit verify`.
 */
export function registerLifecycle(ctx: CommandContext): void {
  const clients = ctx.program.command('clients').description("a client's lifecycle: suspend, resume, offboard, restore, purge");
  const simple = [
    ['suspend', 'suspend a client (spec.suspended: true in its manifest)'],
    ['resume', 'resume a suspended client'],
    ['restore', 'bring an offboarded client back with the same IDs'],
  ] as const;
  for (const [verb, description] of simple) {
    clients
      .command(`${verb} <clientId>`)
      .description(description)
      .action(async (id: string) => {
        if (!refuseWhenOwned(ctx, verb)) return;
        await withRuntime(ctx, async (rt) => {
          const out = await new ClientLifecycle({ runtime: rt })[verb](normalizeClientId(id), cliPrincipal());
          ctx.io.out(`${out.clientId} ${out.status}`);
        });
      });
  }
  clients
    .command('offboard <clientId>')
    .description('withdraw the client manifest: OFFBOARDED, kept until BI_RETENTION has passed')
    .action(async (id: string) => {
      if (!refuseWhenOwned(ctx, 'offboard')) return;
      await withRuntime(ctx, async (rt) => {
        const clientId = normalizeClientId(id);
        await new OffboardClient({ runtime: rt }).run(clientId, clientId, cliPrincipal());
        ctx.io.out(`${clientId} OFFBOARDED`);
      });
    });
  clients
    .command('purge <clientId>')
    .description('remove an offboarded client for good (after its retention, or with --force)')
    .option('--force', 'purge before retainUntil')
    .action(async (id: string, opts: { force?: boolean }) => {
      if (!refuseWhenOwned(ctx, 'purge')) return;
      await withRuntime(ctx, async (rt) => {
        const clientId = normalizeClientId(id);
        const out = await rt.purges.purge(clientId, { confirm: clientId, ...(opts.force ? { force: true } : {}) }, cliPrincipal());
        for (const item of out.removes) ctx.io.out(`${out.dryRun ? 'would remove' : 'removed'} ${item.kind} ${item.id}`);
        ctx.io.out(`${clientId} ${out.dryRun ? 'dry run: nothing removed' : (out.status ?? 'DELETED')}`);
      });
    });

  const audit = ctx.program.command('audit').description('the hash-chained audit log');
  audit
    .command('verify')
    .description('walk the chain; prints `broken at seq <N>` for the first entry that does not hold (exit 1)')
    .action(() => {
      const db = openStore(commandConfig(ctx).dbPath);
      try {
        const r = verifyAudit(db);
        if (r.ok) ctx.io.out(`ok: ${r.entries} entries`);
        else {
          ctx.io.out(`broken at seq ${r.brokenAt}`);
          ctx.setCode(1);
        }
      } finally {
        db.close();
      }
    });
}
