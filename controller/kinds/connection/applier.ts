import type { Connection } from '../../generated/schema-types.ts';
import { StepError } from '../../errors.ts';
import type { Applier, ApplyContext, PruneContext } from '../../types.ts';

/** A Connection manifest's spec (schemas/connection.schema.json). */
export type ConnectionSpec = Connection;

const COLUMNS = ['name', 'vendor', 'account_url', 'warehouse', 'database_name', 'schema_name', 'username', 'password_env', 'secret_ref'] as const;
type Columns = Record<(typeof COLUMNS)[number], string | null>;

/** Builds the stored columns of a connection; `host:port` stands in for the account URL of a PostgreSQL server. */
export function connectionColumns(spec: ConnectionSpec): Columns {
  const hostUrl = spec.host ? `postgresql://${spec.host}${spec.port ? `:${spec.port}` : ''}` : null;
  return {
    name: spec.name,
    vendor: spec.vendor,
    account_url: spec.accountUrl ?? hostUrl,
    warehouse: spec.warehouse ?? null,
    database_name: spec.database ?? null,
    schema_name: spec.schema ?? null,
    username: spec.username ?? null,
    password_env: spec.passwordEnv ?? null,
    secret_ref: spec.secretRef ?? null,
  };
}

/** Connection: a warehouse connection record, credentials by reference only. */
export const connectionApplier: Applier<ConnectionSpec> = {
  kind: 'Connection',
  order: 0,
  apply(ctx: ApplyContext<ConnectionSpec>) {
    const { db, manifest, now } = ctx;
    const spec = manifest.spec;
    const prevId = ctx.previous?.connectionId as string | undefined;
    const id = spec.connectionId ?? prevId ?? ctx.ids.next('connection');
    const existing = db.statements.prepare(`SELECT connection_id, manifest_key, ${COLUMNS.join(', ')} FROM connections WHERE connection_id = ?`).get(id) as
      | (Columns & { manifest_key: string | null })
      | undefined;
    if (existing && existing.manifest_key && existing.manifest_key !== ctx.key && existing.manifest_key.startsWith('Connection/')) {
      throw new StepError('connection', `connection ${id} is already defined by ${existing.manifest_key}`);
    }
    if (spec.connectionId) ctx.ids.pin('connection', id);
    ctx.step('connection');
    const cols = connectionColumns(spec);
    const at = now.toISOString();
    if (!existing) {
      db.statements.prepare(
        `INSERT INTO connections (connection_id, ${COLUMNS.join(', ')}, manifest_key, created_at, updated_at)
         VALUES (@id, ${COLUMNS.map((c) => `@${c}`).join(', ')}, @key, @at, @at)`,
      ).run({ id, ...cols, key: ctx.key, at });
    } else if (COLUMNS.some((c) => existing[c] !== cols[c]) || existing.manifest_key !== ctx.key) {
      db.statements.prepare(
        `UPDATE connections SET ${COLUMNS.map((c) => `${c} = @${c}`).join(', ')}, manifest_key = @key, updated_at = @at
         WHERE connection_id = @id`,
      ).run({ id, ...cols, key: ctx.key, at });
    }
    if (prevId && prevId !== id) pruneConnection(ctx.db, prevId);
    return { connectionId: id };
  },
  prune(ctx: PruneContext) {
    const id = ctx.previous.connectionId as string | undefined;
    if (id) pruneConnection(ctx.db, id);
  },
};

function pruneConnection(db: PruneContext['db'], id: string): void {
  const used = db.statements.prepare('SELECT COUNT(*) AS n FROM vdms WHERE connection_id = ?').get(id) as { n: number };
  if (used.n > 0) throw new StepError('prune', `connection ${id} is used by ${used.n} VDM(s)`);
  db.statements.prepare('DELETE FROM connections WHERE connection_id = ?').run(id);
}
