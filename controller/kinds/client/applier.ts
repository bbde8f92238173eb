import type { Store } from '../../store/db.ts';
import { boundMessage, StepError } from '../../errors.ts';
import { manifestKey } from '../../manifest/loader.ts';
import type { Applier, ApplyContext, FailureContext, Manifest, Problem, PruneContext } from '../../types.ts';
import { toJson } from '../json.ts';
import { deployDashboards } from './dashboards.ts';
import { matchByNameThenPosition } from './match.ts';
import { readClient, upsertClient, type ClientRow } from './registry.ts';
import { clientRules, normalizeClientId, vdmName } from './rules.ts';
import { type ClientRefs, type ClientSpec, type ClientStep } from './types.ts';
import { connectionOwnership, connectionTaken } from '../connection/store.ts';
import { columnTypesOf } from '../dashboard/fields.ts';
import { actorOf, appendAudit } from '../../audit/log.ts';

/** The audit action of a lifecycle transition between registry states (none when it is not one). */
function transitionAction(from: string | undefined, to: string): string | undefined {
  if (from === to || from === undefined || from === 'FAILED' || from === 'DELETED') return undefined;
  if (to === 'SUSPENDED') return 'client.suspend';
  if (to === 'OFFBOARDED') return 'client.offboard';
  return from === 'OFFBOARDED' ? 'client.restore' : 'client.resume';
}

/** A core model's stored definition (JSON text); an unreadable one declares nothing. */
function parseDefinition(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export interface ClientApplierOptions {
  /**
   * Test seam: fail at the end of this step (after its writes), as if the step itself had
   * failed. A function is asked on every apply, so a test can "fix" the fault for the retry.
   */
  failAt?: ClientStep | (() => ClientStep | undefined);
  /** How long an offboarded client is kept before it may be purged (BI_RETENTION, default 30 d). */
  retentionMs?: number;
}

/** BI_RETENTION's default: an offboarded client is kept 30 days. */
export const DEFAULT_RETENTION_MS = 30 * 24 * 3_600_000;

/** States in which a client keeps its resources and belongs to the manifest that onboarded it. */
const HELD_BY_MANIFEST: ReadonlySet<string> = new Set(['ACTIVE', 'SUSPENDED', 'OFFBOARDED']);

interface Steps {
  run<T>(step: ClientStep, fn: () => T): T;
}

/** The Client applier with the default behaviour (registered in kinds/index.ts). */
export const clientApplier = createClientApplier();

/**
 * Client: onboarding (docs/contract/api.md §4.1) as one transaction. The five steps create the connection (or
 * link it), the client model, the VDMs, the dashboards and the registry record; a failing step
 * rolls all of it back and leaves a FAILED registry entry for audit.
 */
export function createClientApplier(opts: ClientApplierOptions = {}): Applier<ClientSpec> {
  const failAt = typeof opts.failAt === 'function' ? opts.failAt : () => opts.failAt as ClientStep | undefined;
  const retentionMs = opts.retentionMs ?? DEFAULT_RETENTION_MS;
  return {
    kind: 'Client',
    order: 1,
    lint: (manifest) => clientRules(manifest.spec),
    check: checkClient,
    apply(ctx) {
      return applyClient(ctx, stepRunner(ctx, failAt()));
    },
    prune: (ctx) => offboardClient(ctx, retentionMs),
    recordFailure: recordFailedOnboarding,
  };
}

/** Runs one named step: a progress event, errors turned into StepError of that step, the test fault. */
function stepRunner(ctx: ApplyContext<ClientSpec>, fault: ClientStep | undefined): Steps {
  return {
    run<T>(step: ClientStep, fn: () => T): T {
      ctx.step(step);
      let out: T;
      try {
        out = fn();
      } catch (err) {
        if (err instanceof StepError) throw err;
        throw new StepError(step, err instanceof Error ? err.message : String(err));
      }
      if (fault === step) throw new StepError(step, 'injected failure');
      return out;
    },
  };
}

/** The manifest key a Client manifest has. */
const keyOf = (m: Manifest): string => manifestKey('Client', m.metadata.name);

/** Store-dependent checks before apply: a clientId that another manifest onboarded stays its. */
export function checkClient(db: Store, manifest: Manifest<ClientSpec>): Problem[] {
  const spec = manifest.spec;
  const problems: Problem[] = [];
  const clientId = normalizeClientId(spec.clientId);
  const row = readClient(db, clientId);
  if (row && HELD_BY_MANIFEST.has(row.status) && row.manifest_key !== keyOf(manifest)) {
    problems.push({ path: 'spec.clientId', message: `client ${clientId} is already onboarded by ${row.manifest_key ?? 'another manifest'}` });
  }
  return problems;
}

function applyClient(ctx: ApplyContext<ClientSpec>, steps: Steps): ClientRefs {
  const { db, key } = ctx;
  const spec = ctx.manifest.spec;
  const clientId = normalizeClientId(spec.clientId);
  const at = ctx.now.toISOString();
  const previous = ctx.previous as Partial<ClientRefs> | undefined;
  const existing = readClient(db, clientId);
  if (existing && HELD_BY_MANIFEST.has(existing.status) && existing.manifest_key !== key) {
    throw new StepError('validate', `client ${clientId} is already onboarded by ${existing.manifest_key ?? 'another manifest'}`);
  }
  let changed = false;
  // The manifest now names another client: the old one is pruned in this same transaction.
  if (previous?.clientId && previous.clientId !== clientId) {
    pruneResources(db, key, previous);
    markDeleted(db, previous.clientId, key, at);
    changed = true;
  }

  const connection = steps.run('create connection', () => {
    const r = ensureConnection(ctx, spec, clientId, at);
    changed ||= r.created;
    return r;
  });

  let columnTypes: Map<string, string> | undefined;
  const modelId = steps.run('create model', () => {
    const core = db.statements.prepare('SELECT model_id, definition FROM core_models WHERE model_id = ?').get(spec.coreModelId) as { definition: string } | undefined;
    if (!core) throw new StepError('create model', `core model ${spec.coreModelId} does not exist`);
    columnTypes = columnTypesOf(parseDefinition(core.definition));
    const r = upsertModel(ctx, spec, clientId, at);
    changed ||= r.changed;
    return r.modelId;
  });

  const vdmIds = steps.run('publish vdm', () => {
    const r = publishVdms(ctx, spec, clientId, modelId, connection.connectionId, at);
    changed ||= r.changed;
    return r.vdmIds;
  });

  const dashboards = steps.run('deploy dashboard', () => {
    const r = deployDashboards({
      db,
      ids: ctx.ids,
      at,
      key,
      actor: ctx.actor,
      clientId,
      connectionId: connection.connectionId,
      firstVdm: { id: vdmIds[0], spec: spec.vdm[0] },
      dashboards: spec.dashboards ?? [],
      ...(columnTypes ? { columnTypes } : {}),
    });
    changed ||= r.changed;
    return r;
  });

  // Kept through a suspension or an offboarding: re-adding the manifest keeps who onboarded it and when.
  const kept = existing !== undefined && HELD_BY_MANIFEST.has(existing.status);
  const suspended = spec.suspended === true;
  steps.run('register client', () => {
    // A connection this client created and no longer uses goes.
    if (previous?.connectionCreated && previous.connectionId && previous.connectionId !== connection.connectionId) {
      changed = removeConnectionIfUnused(db, previous.connectionId, key) || changed;
    }
    const row: ClientRow = {
      client_id: clientId,
      client_name: spec.clientName,
      description: spec.description ?? '',
      connection_id: connection.connectionId,
      model_id: modelId,
      vdm_ids: toJson(vdmIds),
      facade_ids: toJson(dashboards.facadeIds),
      experiment_ids: toJson(dashboards.experimentIds),
      core_model_id: spec.coreModelId,
      status: suspended ? 'SUSPENDED' : 'ACTIVE',
      onboarded_by: kept ? existing.onboarded_by : ctx.actor,
      onboarded_date: kept ? existing.onboarded_date : at,
      last_modified_date: at,
      is_active: suspended ? 0 : 1,
      is_deleted: 0,
      failed_step: null,
      failure_reason: null,
      manifest_key: key,
      retain_until: null,
    };
    if (existing?.status === row.status && !changed && sameRegistryFields(existing, row)) return;
    upsertClient(db, row);
    const action = transitionAction(existing?.status, row.status);
    if (action) appendAudit(db, { actor: actorOf(ctx.actor), action, clientId, object: { kind: 'Client', id: clientId }, result: 'ok' }, () => ctx.now);
  });

  return {
    clientId,
    connectionId: connection.connectionId,
    connectionCreated:
      connection.created ||
      (previous?.connectionCreated === true && previous.connectionId === connection.connectionId) ||
      createdByManifest(db, connection.connectionId, key),
    modelId,
    vdmIds,
    facadeIds: dashboards.facadeIds,
    experimentIds: dashboards.experimentIds,
  };
}

function sameRegistryFields(a: ClientRow, b: ClientRow): boolean {
  const fields: (keyof ClientRow)[] = ['client_name', 'description', 'connection_id', 'model_id', 'vdm_ids', 'facade_ids', 'experiment_ids', 'core_model_id'];
  return fields.every((f) => a[f] === b[f]);
}

/** Step 1: the connection record, created with the supplied ID when none exists, linked when one does. */
function ensureConnection(ctx: ApplyContext<ClientSpec>, spec: ClientSpec, clientId: string, at: string): { connectionId: string; created: boolean } {
  const id = spec.connectionId;
  const row = connectionOwnership(ctx.db, id);
  if (row) {
    // Never bound to another client's connection; an unowned (platform) one is claimed.
    if (!row.shared && row.owner !== null && row.owner !== clientId) throw new StepError('create connection', connectionTaken(id));
    if (!row.shared && row.owner === null) ctx.db.statements.prepare('UPDATE connections SET owner_client_id = ? WHERE connection_id = ?').run(clientId, id);
    return { connectionId: id, created: false };
  }
  ctx.ids.pin('connection', id);
  const vendor = spec.vdm[0].vendor === 'POSTGRESQL' ? 'POSTGRESQL' : 'SNOWFLAKE';
  ctx.db
    .statements.prepare(
      `INSERT INTO connections (connection_id, name, vendor, manifest_key, owner_client_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(id, `${clientId} warehouse`, vendor, ctx.key, clientId, at, at);
  return { connectionId: id, created: true };
}

interface ModelRow {
  model_id: string;
  core_model_id: string;
  name: string;
  security_enabled: number;
  external_id_key: string | null;
}

/** Step 2: the client semantic model inheriting from the core model. */
function upsertModel(
  ctx: ApplyContext<ClientSpec>,
  spec: ClientSpec,
  clientId: string,
  at: string,
): { modelId: string; changed: boolean } {
  const { db } = ctx;
  const row = db
    .statements.prepare(
      `SELECT model_id, core_model_id, name, security_enabled, external_id_key FROM semantic_models
       WHERE client_id = ? AND manifest_key = ? ORDER BY created_at, model_id LIMIT 1`,
    )
    .get(clientId, ctx.key) as ModelRow | undefined;
  const next = {
    core: spec.coreModelId,
    name: spec.clientName,
    security: spec.security.enabled ? 1 : 0,
    ext: spec.externalIdKey ?? null,
  };
  if (!row) {
    const modelId = ctx.ids.next('semanticModel');
    db.statements.prepare(
      `INSERT INTO semantic_models (model_id, client_id, core_model_id, name, security_enabled, external_id_key, manifest_key, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(modelId, clientId, next.core, next.name, next.security, next.ext, ctx.key, at, at);
    return { modelId, changed: true };
  }
  if (row.core_model_id === next.core && row.name === next.name && row.security_enabled === next.security && row.external_id_key === next.ext) {
    return { modelId: row.model_id, changed: false };
  }
  db.statements.prepare('UPDATE semantic_models SET core_model_id = ?, name = ?, security_enabled = ?, external_id_key = ?, updated_at = ? WHERE model_id = ?').run(
    next.core,
    next.name,
    next.security,
    next.ext,
    at,
    row.model_id,
  );
  return { modelId: row.model_id, changed: true };
}

interface VdmRow {
  vdm_id: string;
  name: string;
  position: number;
  connection_id: string;
  published: number;
  config: string;
}

/** Step 3: the VDMs, created and published; unchanged ones keep their IDs, removed ones go. */
function publishVdms(
  ctx: ApplyContext<ClientSpec>,
  spec: ClientSpec,
  clientId: string,
  modelId: string,
  connectionId: string,
  at: string,
): { vdmIds: string[]; changed: boolean } {
  const { db } = ctx;
  const existing = db
    .statements.prepare('SELECT vdm_id, name, position, connection_id, published, config FROM vdms WHERE model_id = ? ORDER BY position, vdm_id')
    .all(modelId) as VdmRow[];
  const names = spec.vdm.map(vdmName);
  const { matches, unmatched } = matchByNameThenPosition(existing, names);
  let changed = false;
  for (const gone of unmatched) {
    db.statements.prepare('DELETE FROM vdms WHERE vdm_id = ?').run(gone.vdm_id);
    changed = true;
  }
  const vdmIds = spec.vdm.map((v, position) => {
    const prev = matches[position];
    const config = toJson(v);
    const cols = { id: prev?.vdm_id ?? ctx.ids.next('vdm'), modelId, clientId, connectionId, name: names[position], position, config, at };
    if (!prev) {
      db.statements.prepare(
        `INSERT INTO vdms (vdm_id, model_id, client_id, connection_id, name, position, published, config, created_at, updated_at)
         VALUES (@id, @modelId, @clientId, @connectionId, @name, @position, 1, @config, @at, @at)`,
      ).run(cols);
      changed = true;
    } else if (prev.name !== cols.name || prev.position !== position || prev.connection_id !== connectionId || prev.published !== 1 || prev.config !== config) {
      db.statements.prepare(
        `UPDATE vdms SET name = @name, position = @position, connection_id = @connectionId, published = 1, config = @config, updated_at = @at
         WHERE vdm_id = @id`,
      ).run(cols);
      changed = true;
    }
    return cols.id;
  });
  return { vdmIds, changed };
}

/** Whether this client's manifest created the connection (kept across an offboarding and a restore). */
function createdByManifest(db: Store, connectionId: string, key: string): boolean {
  const row = db.statements.prepare('SELECT manifest_key FROM connections WHERE connection_id = ?').get(connectionId) as { manifest_key: string | null } | undefined;
  return row?.manifest_key === key;
}

/** Removes a connection this client's onboarding created, unless something else still uses it. */
function removeConnectionIfUnused(db: Store, connectionId: string, key: string): boolean {
  const row = db.statements.prepare('SELECT manifest_key FROM connections WHERE connection_id = ?').get(connectionId) as { manifest_key: string | null } | undefined;
  if (!row || row.manifest_key !== key) return false;
  const used = db
    .statements.prepare('SELECT (SELECT COUNT(*) FROM vdms WHERE connection_id = ?) + (SELECT COUNT(*) FROM facades WHERE connection_id = ?) AS n')
    .get(connectionId, connectionId) as { n: number };
  if (used.n > 0) return false;
  db.statements.prepare('DELETE FROM connections WHERE connection_id = ?').run(connectionId);
  return true;
}

/** Removes everything a client's manifest created: dashboards, the model with its VDMs, its own connection. */
function pruneResources(db: Store, key: string, refs: Partial<ClientRefs>): void {
  const clientId = refs.clientId;
  if (!clientId) return;
  db.statements.prepare('DELETE FROM facades WHERE client_id = ? AND manifest_key = ?').run(clientId, key);
  db.statements.prepare('DELETE FROM semantic_models WHERE client_id = ? AND manifest_key = ?').run(clientId, key);
  if (refs.connectionCreated && refs.connectionId) removeConnectionIfUnused(db, refs.connectionId, key);
}

function markDeleted(db: Store, clientId: string, key: string, at: string): void {
  db.statements.prepare(
    `UPDATE clients SET status = 'DELETED', is_active = 0, is_deleted = 1, last_modified_date = ?
     WHERE client_id = ? AND manifest_key = ? AND status = 'ACTIVE'`,
  ).run(at, clientId, key);
}

/**
 * The manifest is gone: the client is OFFBOARDED, not deleted. Every resource and ID is kept
 * until its purge (after `retainUntil`); re-adding the manifest brings it back as it was.
 */
function offboardClient(ctx: PruneContext, retentionMs: number): void {
  const refs = ctx.previous as Partial<ClientRefs>;
  if (!refs.clientId) return;
  const at = ctx.now.toISOString();
  const retainUntil = new Date(ctx.now.getTime() + retentionMs).toISOString();
  const changed = ctx.db.statements.prepare(
    `UPDATE clients SET status = 'OFFBOARDED', is_active = 0, retain_until = ?, last_modified_date = ?
     WHERE client_id = ? AND manifest_key = ? AND status IN ('ACTIVE', 'SUSPENDED')`,
  ).run(retainUntil, at, refs.clientId, ctx.key).changes;
  if (changed) appendAudit(ctx.db, { actor: actorOf(ctx.actor), action: 'client.offboard', clientId: refs.clientId, object: { kind: 'Client', id: refs.clientId }, result: 'ok' }, () => ctx.now);
}

/**
 * After a failed apply was rolled back: a FAILED registry entry (who, when, which step, why).
 * An ACTIVE client keeps its row: a failed update leaves the last good state.
 */
function recordFailedOnboarding(ctx: FailureContext<ClientSpec>): void {
  const spec = ctx.manifest.spec;
  if (typeof spec.clientId !== 'string') return;
  const clientId = normalizeClientId(spec.clientId);
  const existing = readClient(ctx.db, clientId);
  if (existing && HELD_BY_MANIFEST.has(existing.status)) return;
  const at = ctx.now.toISOString();
  const step = ctx.error instanceof StepError ? ctx.error.step : 'apply';
  const reason = ctx.error instanceof StepError ? ctx.error.reason : ctx.error.message;
  upsertClient(ctx.db, {
    client_id: clientId,
    client_name: spec.clientName,
    description: spec.description ?? '',
    connection_id: spec.connectionId,
    model_id: null,
    vdm_ids: '[]',
    facade_ids: '[]',
    experiment_ids: '[]',
    core_model_id: spec.coreModelId,
    status: 'FAILED',
    onboarded_by: ctx.actor,
    onboarded_date: at,
    last_modified_date: at,
    is_active: 0,
    is_deleted: 0,
    failed_step: step,
    failure_reason: boundMessage(reason),
    manifest_key: ctx.key,
    retain_until: null,
  });
}
