import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { readClient } from '../kinds/client/registry.ts';
import { isLive } from '../reconciler/status.ts';
import type { LifecyclePorts } from './ports.ts';
import type { Store } from '../store/db.ts';
import type { Principal } from '../auth/principal.ts';
import type { ApiPurgeItem } from '../generated/schema-types.ts';
import { isUnconfined } from '../authz/tenants.ts';
import { actorOf, appendAudit } from '../audit/log.ts';

/** One object a purge removes (`runs`: the runs of one pipeline, by pipeline ID). */
export type PurgeItem = ApiPurgeItem;

/**
 * The steps of a purge, in order. Each runs in its own transaction and is recorded as done in
 * `client_purges` with it, so a purge a crash interrupted resumes at the first step not done.
 */
export const PURGE_STEPS = ['runs', 'manifests', 'pipelines', 'dashboards', 'model', 'keys', 'connection', 'registry'] as const;
export type PurgeStep = (typeof PURGE_STEPS)[number];

export interface PurgeAnswer {
  clientId: string;
  status?: string;
  dryRun?: true;
  removes: PurgeItem[];
}

export interface ClientPurgeOptions {
  runtime: LifecyclePorts;
  /** Test seam: stop (as a crash would) right after this step has committed. */
  crashAfter?: PurgeStep;
}

/** The purge a crash left half done (thrown by the test seam). */
export class PurgeInterrupted extends Error {}

/**
 * Purging an OFFBOARDED client (docs/contract/design.md, "Tenant lifecycle"): after `retainUntil` (before it
 * only when an admin forces it), its model, VDMs, dashboards, pipelines and their runs, keys,
 * then its own connection and stored secret when nothing else uses them, are removed; the
 * registry record stays as DELETED. The intent is recorded before the first step.
 */
export class ClientPurge {
  readonly #rt: LifecyclePorts;
  readonly #crashAfter: PurgeStep | undefined;

  constructor(opts: ClientPurgeOptions) {
    this.#rt = opts.runtime;
    this.#crashAfter = opts.crashAfter;
  }

  /** `POST …/clients/{clientId}/purge/{userId}` and `bictl clients purge`. */
  async purge(clientId: string, body: unknown, caller: Principal): Promise<PurgeAnswer> {
    const rt = this.#rt;
    const { confirm, force } = (typeof body === 'object' && body !== null ? body : {}) as { confirm?: unknown; force?: unknown };
    if (typeof confirm !== 'string' || confirm.trim().toUpperCase() !== clientId) {
      throw new ValidationError([{ path: 'confirm', message: `confirm must repeat the client ID ${clientId}` }]);
    }
    if (force !== undefined && typeof force !== 'boolean') throw new ValidationError([{ path: 'force', message: 'force must be a boolean' }]);
    return rt.locks.run(`Client/${clientId}`, async () => {
      const row = readClient(rt.db, clientId);
      if (!row) throw new NotFoundError(`Client ${clientId} not found`);
      const pending = this.#pending(clientId);
      if (!pending) {
        if (row.status !== 'OFFBOARDED') throw new ConflictError(`Client ${clientId} is ${row.status}: only an OFFBOARDED client can be purged`);
        const now = rt.clock();
        if (row.retain_until && now.toISOString() < row.retain_until && !(force === true && caller.role === 'admin' && isUnconfined(caller))) {
          throw new ConflictError(`Client ${clientId} is retained until ${row.retain_until}: purge it then, or force it as an admin`);
        }
        if (rt.config.purgeDryRun) {
          const plan = purgePlan(rt.db, clientId);
          rt.log.info({ clientId, removes: plan.map((r) => `${r.kind}/${r.id}`) }, 'purge dry run (BI_PURGE_DRY_RUN): nothing removed');
          return { clientId, dryRun: true, removes: plan };
        }
        rt.db.statements
          .prepare('INSERT INTO client_purges (client_id, requested_by, requested_at, forced, manifest_key) VALUES (?, ?, ?, ?, ?)')
          .run(clientId, caller.userId, now.toISOString(), force === true ? 1 : 0, row.manifest_key);
      }
      const removes = purgePlan(rt.db, clientId);
      await this.#finish(clientId, caller.userId);
      return { clientId, status: readClient(rt.db, clientId)?.status ?? 'DELETED', removes };
    });
  }

  /** At start: every purge a crash interrupted is finished. Returns the clients purged. */
  async resumePending(): Promise<string[]> {
    const rows = this.#rt.db.statements.prepare('SELECT client_id, requested_by FROM client_purges WHERE finished_at IS NULL ORDER BY requested_at').all() as {
      client_id: string;
      requested_by: string;
    }[];
    for (const r of rows) {
      this.#rt.log.warn({ clientId: r.client_id }, 'finishing a purge a restart interrupted');
      await this.#rt.locks.run(`Client/${r.client_id}`, () => this.#finish(r.client_id, r.requested_by));
    }
    return rows.map((r) => r.client_id);
  }

  /** Purges pending: recorded and not finished, or offboarded clients past `retainUntil`. */
  pendingCount(): number {
    const now = this.#rt.clock().toISOString();
    const row = this.#rt.db.statements
      .prepare(
        `SELECT (SELECT COUNT(*) FROM client_purges WHERE finished_at IS NULL)
              + (SELECT COUNT(*) FROM clients WHERE status = 'OFFBOARDED' AND retain_until <= ?) AS n`,
      )
      .get(now) as { n: number };
    return row.n;
  }

  #pending(clientId: string): { steps_done: string } | undefined {
    return this.#rt.db.statements.prepare('SELECT steps_done FROM client_purges WHERE client_id = ? AND finished_at IS NULL').get(clientId) as
      | { steps_done: string }
      | undefined;
  }

  async #finish(clientId: string, actor: string): Promise<void> {
    const rt = this.#rt;
    for (const step of PURGE_STEPS) {
      const pending = this.#pending(clientId);
      if (!pending) return;
      const done = JSON.parse(pending.steps_done) as string[];
      if (done.includes(step)) continue;
      if (step === 'runs') await this.#cancelRuns(clientId);
      if (step === 'manifests') await this.#withdrawManifests(clientId, actor, ['Dashboard', 'Pipeline']);
      if (step === 'connection') await this.#withdrawManifests(clientId, actor, ['Connection']);
      rt.db.transaction(() => {
        STEP_SQL[step](rt, clientId);
        if (step === 'registry') appendAudit(rt.db, { actor: actorOf(actor), action: 'client.purge', clientId, object: { kind: 'Client', id: clientId }, result: 'ok' }, rt.clock);
        const at = rt.clock().toISOString();
        rt.db.statements
          .prepare(`UPDATE client_purges SET steps_done = json_insert(steps_done, '$[#]', ?)${step === 'registry' ? ', finished_at = ?' : ''} WHERE client_id = ?`)
          .run(...(step === 'registry' ? [step, at, clientId] : [step, clientId]));
      })();
      if (this.#crashAfter === step) throw new PurgeInterrupted(`purge of ${clientId} interrupted after ${step}`);
    }
  }

  /** Queued and running runs of the client's pipelines stop before their records go. */
  async #cancelRuns(clientId: string): Promise<void> {
    const runs = this.#rt.db.statements
      .prepare(
        `SELECT r.run_id FROM pipeline_runs r JOIN pipelines p ON p.pipeline_id = r.pipeline_id
         WHERE p.owner_client_id = ? AND r.status IN ('queued', 'running')`,
      )
      .all(clientId) as { run_id: string }[];
    for (const r of runs) {
      try {
        await this.#rt.runs.dispatcher.cancel(r.run_id);
      } catch {
        // Ended meanwhile.
      }
    }
  }

  /**
   * The client's Dashboard, Pipeline and own Connection manifests still at the source are
   * withdrawn through the one write path, so the next sync does not bring them back.
   */
  async #withdrawManifests(clientId: string, actor: string, kinds: readonly string[]): Promise<void> {
    const rt = this.#rt;
    const caller = { userId: actor, username: actor, role: 'admin' as const, via: 'session' as const };
    for (const key of clientManifestKeys(rt.db, clientId)) {
      if (!kinds.includes(key.slice(0, key.indexOf('/')))) continue;
      const row = rt.reconciler.status.get(key);
      if (row?.path && isLive(row) && rt.source.read(row.path) !== null) await rt.submitter.withdraw(row.path, caller, `purge client ${clientId}: remove ${key}`);
      // Its applied versions go too (they hold the object's configuration).
      rt.applied.forget([key]);
    }
  }
}

/** Manifest keys of the objects the client owns (dashboards, pipelines, its own unused connections). */
function clientManifestKeys(db: Store, clientId: string): string[] {
  const rows = db.statements
    .prepare(
      `SELECT manifest_key FROM facades WHERE owner_client_id = @c AND manifest_key LIKE 'Dashboard/%'
       UNION SELECT manifest_key FROM pipelines WHERE owner_client_id = @c AND manifest_key LIKE 'Pipeline/%'
       UNION SELECT manifest_key FROM connections WHERE owner_client_id = @c AND shared = 0 AND manifest_key LIKE 'Connection/%'`,
    )
    .all({ c: clientId }) as { manifest_key: string }[];
  const unused = new Set(unusedConnections(db, clientId).map((c) => c.connectionId));
  const usedConnectionKeys = new Set(
    (db.statements.prepare('SELECT connection_id, manifest_key FROM connections WHERE owner_client_id = ?').all(clientId) as { connection_id: string; manifest_key: string | null }[])
      .filter((c) => !unused.has(c.connection_id))
      .map((c) => c.manifest_key),
  );
  return rows.map((r) => r.manifest_key).filter((k) => !usedConnectionKeys.has(k));
}

/** The client's own connections nothing of another client uses, with their stored secret when no other connection shares it. */
function unusedConnections(db: Store, clientId: string): { connectionId: string; secretId: string | null }[] {
  const rows = db.statements
    .prepare(
      `SELECT c.connection_id, c.secret_ref FROM connections c
       WHERE c.owner_client_id = ? AND c.shared = 0
         AND NOT EXISTS (SELECT 1 FROM vdms v WHERE v.connection_id = c.connection_id AND v.client_id IS NOT c.owner_client_id)
         AND NOT EXISTS (SELECT 1 FROM facades f WHERE f.connection_id = c.connection_id AND f.owner_client_id IS NOT c.owner_client_id)
         AND NOT EXISTS (SELECT 1 FROM pipelines p WHERE p.owner_client_id IS NOT c.owner_client_id
                         AND (instr(p.source, c.connection_id) > 0 OR instr(p.destination, c.connection_id) > 0))`,
    )
    .all(clientId) as { connection_id: string; secret_ref: string | null }[];
  return rows.map((r) => {
    const secretId = r.secret_ref?.startsWith('secret:') ? r.secret_ref.slice('secret:'.length) : r.secret_ref;
    const shared = r.secret_ref
      ? (db.statements.prepare('SELECT COUNT(*) AS n FROM connections WHERE secret_ref = ? AND connection_id <> ?').get(r.secret_ref, r.connection_id) as { n: number }).n > 0
      : true;
    return { connectionId: r.connection_id, secretId: shared ? null : (secretId ?? null) };
  });
}

/** What a purge of the client removes now (the dry run's answer, and the purge's). */
export function purgePlan(db: Store, clientId: string): PurgeItem[] {
  const all = <T>(sql: string): T[] => db.statements.prepare(sql).all(clientId) as T[];
  const pipelines = all<{ pipeline_id: string; runs: number }>(
    'SELECT p.pipeline_id, (SELECT COUNT(*) FROM pipeline_runs r WHERE r.pipeline_id = p.pipeline_id) AS runs FROM pipelines p WHERE p.owner_client_id = ? ORDER BY p.pipeline_id',
  );
  const items: PurgeItem[] = [];
  for (const p of pipelines) {
    items.push({ kind: 'pipeline', id: p.pipeline_id });
    if (p.runs > 0) items.push({ kind: 'runs', id: p.pipeline_id });
  }
  for (const f of all<{ facade_id: string }>('SELECT facade_id FROM facades WHERE owner_client_id = ? ORDER BY facade_id')) items.push({ kind: 'dashboard', id: f.facade_id });
  for (const m of all<{ model_id: string }>('SELECT model_id FROM semantic_models WHERE client_id = ? ORDER BY model_id')) items.push({ kind: 'model', id: m.model_id });
  for (const v of all<{ vdm_id: string }>('SELECT vdm_id FROM vdms WHERE client_id = ? ORDER BY vdm_id')) items.push({ kind: 'vdm', id: v.vdm_id });
  for (const k of all<{ key_id: string }>('SELECT key_id FROM api_keys WHERE client_id = ? ORDER BY key_id')) items.push({ kind: 'key', id: k.key_id });
  for (const c of unusedConnections(db, clientId)) {
    items.push({ kind: 'connection', id: c.connectionId });
    if (c.secretId) items.push({ kind: 'secret', id: c.secretId });
  }
  return items;
}

/** The store writes of each step (idempotent: a step run twice removes nothing more). */
const STEP_SQL: Record<PurgeStep, (rt: LifecyclePorts, clientId: string) => void> = {
  runs(rt, clientId) {
    const db = rt.db.statements;
    const owned = 'SELECT pipeline_id FROM pipelines WHERE owner_client_id = ?';
    db.prepare(`DELETE FROM pipeline_run_logs WHERE run_id IN (SELECT run_id FROM pipeline_runs WHERE pipeline_id IN (${owned}))`).run(clientId);
    db.prepare(`DELETE FROM pipeline_run_rejects WHERE run_id IN (SELECT run_id FROM pipeline_runs WHERE pipeline_id IN (${owned}))`).run(clientId);
    db.prepare(`DELETE FROM pipeline_runs WHERE pipeline_id IN (${owned})`).run(clientId);
    db.prepare(`DELETE FROM pipeline_schedule_state WHERE pipeline_id IN (${owned})`).run(clientId);
  },
  pipelines(rt, clientId) {
    rt.db.statements.prepare('DELETE FROM pipelines WHERE owner_client_id = ?').run(clientId);
  },
  dashboards(rt, clientId) {
    rt.db.statements.prepare('DELETE FROM facades WHERE owner_client_id = ?').run(clientId);
  },
  model(rt, clientId) {
    rt.db.statements.prepare('DELETE FROM vdms WHERE client_id = ?').run(clientId);
    rt.db.statements.prepare('DELETE FROM semantic_models WHERE client_id = ?').run(clientId);
  },
  // The withdrawals run before this step's transaction (they are reconciles of their own).
  manifests() {},
  keys(rt, clientId) {
    const keys = rt.db.statements.prepare('SELECT key_id FROM api_keys WHERE client_id = ?').all(clientId) as { key_id: string }[];
    for (const k of keys) rt.auth.revokeKey(k.key_id);
    rt.db.statements.prepare('DELETE FROM api_keys WHERE client_id = ?').run(clientId);
  },
  connection(rt, clientId) {
    for (const c of unusedConnections(rt.db, clientId)) {
      rt.db.statements.prepare('DELETE FROM connections WHERE connection_id = ?').run(c.connectionId);
      if (c.secretId) rt.db.statements.prepare('DELETE FROM secrets WHERE secret_id = ?').run(c.secretId);
    }
  },
  registry(rt, clientId) {
    // The Client manifest's applied versions (the onboarding package as applied).
    const client = rt.db.statements.prepare('SELECT manifest_key FROM clients WHERE client_id = ?').get(clientId) as { manifest_key: string | null } | undefined;
    if (client?.manifest_key) rt.applied.forget([client.manifest_key]);
    rt.db.statements
      .prepare(
        `UPDATE clients SET status = 'DELETED', is_active = 0, is_deleted = 1, retain_until = NULL, last_modified_date = ?
         WHERE client_id = ?`,
      )
      .run(rt.clock().toISOString(), clientId);
  },
};
