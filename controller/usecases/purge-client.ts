import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { countDueForPurge, markPurged, readClient } from '../kinds/client/registry.ts';
import { deleteModelsOf, modelsOf, vdmOfAnotherClientOn } from '../kinds/client/resources.ts';
import { connectionsOwnedBy, deleteConnection, secretSharedBeyond } from '../kinds/connection/store.ts';
import { dashboardIdsOwnedBy, dashboardManifestsOwnedBy, dashboardOfAnotherOwnerOn, deleteDashboardsOwnedBy } from '../kinds/dashboard/store.ts';
import { deletePipelinesOwnedBy, pipelineIdsOwnedBy, pipelineManifestsOwnedBy, pipelineOfAnotherOwnerOn } from '../kinds/pipeline/store.ts';
import { deleteRunsOf, runCounts, runIdsOf } from '../runs/store.ts';
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
    const recorded = this.#rt.db.statements.prepare('SELECT COUNT(*) AS n FROM client_purges WHERE finished_at IS NULL').get() as { n: number };
    return recorded.n + countDueForPurge(this.#rt.db, now);
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
    const runs = runIdsOf(this.#rt.db, pipelineIdsOwnedBy(this.#rt.db, clientId), ['queued', 'running']);
    for (const runId of runs) {
      try {
        await this.#rt.runs.dispatcher.cancel(runId);
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
  const unused = new Set(unusedConnections(db, clientId).map((c) => c.connectionId));
  const connections = connectionsOwnedBy(db, clientId)
    .filter((c) => unused.has(c.connectionId) && c.manifestKey?.startsWith('Connection/'))
    .map((c) => c.manifestKey as string);
  return [...new Set([...dashboardManifestsOwnedBy(db, clientId), ...pipelineManifestsOwnedBy(db, clientId), ...connections])].sort();
}

/** The client's own connections nothing of another client uses, with their stored secret when no other connection shares it. */
function unusedConnections(db: Store, clientId: string): { connectionId: string; secretId: string | null }[] {
  return connectionsOwnedBy(db, clientId)
    .filter((c) => !vdmOfAnotherClientOn(db, c.connectionId, clientId) && !dashboardOfAnotherOwnerOn(db, c.connectionId, clientId) && !pipelineOfAnotherOwnerOn(db, c.connectionId, clientId))
    .map((c) => {
      const secretId = c.secretRef?.startsWith('secret:') ? c.secretRef.slice('secret:'.length) : c.secretRef;
      const shared = c.secretRef ? secretSharedBeyond(db, c.secretRef, c.connectionId) : true;
      return { connectionId: c.connectionId, secretId: shared ? null : (secretId ?? null) };
    });
}

/** What a purge of the client removes now (the dry run's answer, and the purge's). */
export function purgePlan(db: Store, clientId: string): PurgeItem[] {
  const pipelines = pipelineIdsOwnedBy(db, clientId);
  const runs = runCounts(db, pipelines);
  const items: PurgeItem[] = [];
  for (const id of pipelines) {
    items.push({ kind: 'pipeline', id });
    if ((runs.get(id) ?? 0) > 0) items.push({ kind: 'runs', id });
  }
  for (const id of dashboardIdsOwnedBy(db, clientId)) items.push({ kind: 'dashboard', id });
  const { models, vdms } = modelsOf(db, clientId);
  for (const id of models) items.push({ kind: 'model', id });
  for (const id of vdms) items.push({ kind: 'vdm', id });
  for (const k of db.statements.prepare('SELECT key_id FROM api_keys WHERE client_id = ? ORDER BY key_id').all(clientId) as { key_id: string }[]) items.push({ kind: 'key', id: k.key_id });
  for (const c of unusedConnections(db, clientId)) {
    items.push({ kind: 'connection', id: c.connectionId });
    if (c.secretId) items.push({ kind: 'secret', id: c.secretId });
  }
  return items;
}

/** The store writes of each step (idempotent: a step run twice removes nothing more); each kind removes its own rows. */
const STEP_SQL: Record<PurgeStep, (rt: LifecyclePorts, clientId: string) => void> = {
  runs(rt, clientId) {
    deleteRunsOf(rt.db, pipelineIdsOwnedBy(rt.db, clientId));
  },
  pipelines(rt, clientId) {
    deletePipelinesOwnedBy(rt.db, clientId);
  },
  dashboards(rt, clientId) {
    deleteDashboardsOwnedBy(rt.db, clientId);
  },
  model(rt, clientId) {
    deleteModelsOf(rt.db, clientId);
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
      deleteConnection(rt.db, c.connectionId);
      if (c.secretId) rt.db.statements.prepare('DELETE FROM secrets WHERE secret_id = ?').run(c.secretId);
    }
  },
  registry(rt, clientId) {
    // The Client manifest's applied versions (the onboarding package as applied).
    const key = readClient(rt.db, clientId)?.manifest_key;
    if (key) rt.applied.forget([key]);
    markPurged(rt.db, clientId, rt.clock().toISOString());
  },
};
