import type { Connection } from '../../generated/schema-types.ts';
import { StepError } from '../../errors.ts';
import type { Applier, ApplyContext, PruneContext } from '../../types.ts';
import { connectionOwnership } from './store.ts';

/** A Connection manifest's spec (schemas/connection.schema.json). */
export type ConnectionSpec = Connection;

const COLUMNS = ['name', 'vendor', 'account_url', 'warehouse', 'database_name', 'schema_name', 'username', 'password_env', 'secret_ref', 'tenant_schema'] as const;
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
    tenant_schema: spec.tenantSchema ?? null,
  };
}

/** Connection: a warehouse connection record, credentials by reference only. */
export const connectionApplier: Applier<ConnectionSpec> = {
  kind: 'Connection',
  order: 0,
  lint(manifest) {
    const spec = manifest.spec;
    return [
      ...(spec.shared === true && spec.owner !== undefined ? [{ path: 'spec.owner', message: 'spec.owner and spec.shared: true exclude each other' }] : []),
      // Each tenant's pipelines on a shared connection work in their own schema (runs/reach.ts).
      ...(spec.shared === true && spec.tenantSchema === undefined
        ? [{ path: 'spec.tenantSchema', message: 'spec.tenantSchema is required when spec.shared is true: a schema pattern with {clientId}, e.g. t_{clientId}' }]
        : []),
    ];
  },
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
    applyOwnership(db, id, spec);
    if (prevId && prevId !== id) pruneConnection(ctx.db, prevId);
    return { connectionId: id };
  },
  prune(ctx: PruneContext) {
    const id = ctx.previous.connectionId as string | undefined;
    if (id) pruneConnection(ctx.db, id);
  },
};

/**
 * Ownership never changes silently: a manifest may name the owner a connection already has (or
 * give an unowned one its owner), or share an unowned one; moving it to another client fails.
 */
function applyOwnership(db: PruneContext['db'], id: string, spec: ConnectionSpec): void {
  const current = connectionOwnership(db, id);
  const owner = spec.owner?.toUpperCase();
  const stored = current?.owner ?? null;
  if (stored !== null && ((owner !== undefined && owner !== stored) || spec.shared === true)) {
    throw new StepError('connection', `connection ${id} belongs to client ${stored}; its owner cannot change`);
  }
  const shared = spec.shared === true ? 1 : 0;
  db.prepare('UPDATE connections SET owner_client_id = COALESCE(owner_client_id, ?), shared = ? WHERE connection_id = ? AND (shared <> ? OR owner_client_id IS NOT COALESCE(owner_client_id, ?))').run(
    owner ?? null,
    shared,
    id,
    shared,
    owner ?? null,
  );
}

function pruneConnection(db: PruneContext['db'], id: string): void {
  const used = db.statements.prepare('SELECT COUNT(*) AS n FROM vdms WHERE connection_id = ?').get(id) as { n: number };
  if (used.n > 0) throw new StepError('prune', `connection ${id} is used by ${used.n} VDM(s)`);
  db.statements.prepare('DELETE FROM connections WHERE connection_id = ?').run(id);
}
