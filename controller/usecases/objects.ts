import { posix } from 'node:path';
import { appendAudit } from '../audit/log.ts';
import type { AuditEntry } from '../audit/log.ts';
import { readAudit } from '../audit/log.ts';
import type { Principal } from '../auth/principal.ts';
import { ConflictError, formatProblem, NotFoundError, ValidationError } from '../errors.ts';
import { diffFields, type FieldChange } from '../kinds/clientset/preview.ts';
import { manifestKey, parseManifest, readDocument } from '../manifest/loader.ts';
import type { StatusRecord } from '../reconciler/status.ts';
import type { ReconcileResult } from '../reconciler/types.ts';
import type { Config } from '../config.ts';
import type { GitSource } from '../sources/git.ts';
import type { KeyedMutex } from '../mutex.ts';
import type { SchemaRegistry } from '../manifest/validator.ts';
import type { AppliedStore, AppliedVersion } from '../reconciler/applied.ts';
import type { Reconciler } from '../reconciler/reconciler.ts';
import type { Store } from '../store/db.ts';
import type { Clock, ManifestSource } from '../types.ts';
import type { ManifestSubmitter } from '../writers/submit.ts';
import { userIdentity } from '../git/identity.ts';
import type { SyncReport } from '../reconciler/types.ts';
import type { Manifest } from '../types.ts';
import { withoutActor } from './manifest-file.ts';

/** What the object views and rollbacks need of the controller. */
export interface ObjectPorts {
  readonly db: Store;
  readonly clock: Clock;
  readonly config: Pick<Config, 'git'>;
  readonly schemas: SchemaRegistry;
  readonly reconciler: Pick<Reconciler, 'status' | 'fileOf' | 'generatedManifest'>;
  readonly source: Pick<ManifestSource, 'read'>;
  readonly applied: Pick<AppliedStore, 'get' | 'list' | 'latest'>;
  readonly locks: KeyedMutex;
  readonly submitter: Pick<ManifestSubmitter, 'submit'>;
  readonly gitSource: GitSource | undefined;
  /** Runs work the shutdown waits for. */
  track<T>(fn: () => Promise<T>): Promise<T>;
}

/** The kinds an object view answers for (every kind a manifest may have). */
export const OBJECT_KINDS = ['Client', 'Dashboard', 'Pipeline', 'Connection', 'CoreModel', 'Notifier', 'ClientSet'] as const;

/** Field names whose string values are credentials: shown as REDACTED, whatever the kind (references such as passwordEnv and secretRef stay). */
const SECRET_FIELD = /^(password|secret|token|apiKey|api_key|authorization|secretAccessKey|privateKey|clientSecret|accessToken)$/i;
export const REDACTED = '<redacted>';

/** Revisions of a file listed in git mode (newest first). */
const GIT_HISTORY_LIMIT = 20;
/** Audit entries of an object listed with its history (newest first). */
const AUDIT_HISTORY_LIMIT = 50;

/** A manifest with every credential-like field's value replaced (a manifest holds references only; this is the belt to that brace). */
export function redactManifest<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => redactManifest(v)) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_FIELD.test(k) && typeof v === 'string' ? REDACTED : redactManifest(v);
    return out as T;
  }
  return value;
}

export type ObjectSource = 'file' | 'git' | 'generated';

export interface ObjectView {
  key: string;
  kind: string;
  name: string;
  source: ObjectSource;
  path: string | null;
  generatedBy: string | null;
  inputId: string | null;
  phase: string | null;
  reason: string | null;
  message: string;
  lastAppliedRevision: string | null;
  lastAttemptedRevision: string | null;
  lastTransitionAt: string | null;
  /** What the source wants now (null: the file is gone or does not parse; `desiredProblem` says which). */
  desired: Manifest | null;
  desiredProblem?: string;
  /** The newest version the reconciler applied (null: never applied since versions are kept). */
  applied: { version: number; appliedAt: string; revision: string | null; actor: string | null; manifest: Manifest } | null;
  /** applied → desired, leaf by leaf (empty when they agree). */
  changes: FieldChange[];
  inSync: boolean;
}

export interface HistoryView {
  key: string;
  mode: 'git' | 'directory' | 'generated';
  rollback: { possible: boolean; reason: string };
  /** git mode: the commits that touched the object's file. */
  revisions: { revision: string; author: string; at: string; subject: string; applied: boolean }[];
  /** Versions the reconciler applied and keeps (the last 10), newest first. */
  versions: { version: number; appliedAt: string; revision: string | null; actor: string | null; digest: string; current: boolean }[];
  /** The audit log's entries about the object, newest first. */
  audit: AuditEntry[];
}

export interface RollbackRequest {
  revision?: string;
  version?: number;
}

/**
 * An object's manifest seen from both sides (docs/console.md, "Objects"): what its source wants
 * and what the reconciler applied, the field-level difference, its history (git revisions, the
 * applied versions the store keeps, the audit log) and rollback — which writes an earlier
 * version back through the one write path (a commit by the caller in git mode).
 */
export class ObjectHistory {
  readonly #rt: ObjectPorts;

  constructor(opts: { runtime: ObjectPorts }) {
    this.#rt = opts.runtime;
  }

  #row(kind: string, name: string): StatusRecord {
    if (!(OBJECT_KINDS as readonly string[]).includes(kind)) {
      throw new ValidationError([{ path: 'kind', message: `must be one of ${OBJECT_KINDS.join(', ')}` }]);
    }
    const key = manifestKey(kind, name);
    const row = this.#rt.reconciler.status.get(key);
    if (!row) throw new NotFoundError(`${key} not found`);
    return row;
  }

  #source(row: StatusRecord): ObjectSource {
    return row.generatedBy ? 'generated' : this.#rt.config.git ? 'git' : 'file';
  }

  /** The desired manifest of `row`'s key: the generated document, or its file parsed and validated. */
  #desired(row: StatusRecord): { manifest: Manifest | null; problem?: string } {
    const rt = this.#rt;
    if (row.generatedBy) {
      const m = rt.reconciler.generatedManifest(row.key);
      return m ? { manifest: m } : { manifest: null, problem: `${row.generatedBy} no longer generates it` };
    }
    const path = rt.reconciler.fileOf(row.key) ?? row.path;
    const file = path ? rt.source.read(path) : null;
    if (!path || !file) return { manifest: null, problem: 'its file is gone (removed from the source)' };
    if (!('bytes' in file)) return { manifest: null, problem: file.unreadable };
    const parsed = parseManifest(path, file.bytes, rt.schemas);
    if (!parsed.ok) return { manifest: null, problem: parsed.problems.map(formatProblem).join('; ') };
    if (parsed.key !== row.key) return { manifest: null, problem: `${path} now defines ${parsed.key}` };
    return { manifest: parsed.manifest };
  }

  read(kind: string, name: string): ObjectView {
    const row = this.#row(kind, name);
    const desired = this.#desired(row);
    const latest: AppliedVersion | undefined = row.phase === 'Pruned' ? undefined : this.#rt.applied.latest(row.key);
    const want = desired.manifest ? redactManifest(withoutActor(desired.manifest)) : null;
    const have = latest ? redactManifest(withoutActor(latest.manifest)) : null;
    const changes = want && have ? diffFields(have, want) : [];
    return {
      key: row.key,
      kind: row.kind,
      name: row.name,
      source: this.#source(row),
      path: row.generatedBy ? null : row.path,
      generatedBy: row.generatedBy,
      inputId: row.inputId,
      phase: row.phase,
      reason: row.reason,
      message: row.message,
      lastAppliedRevision: row.lastAppliedRevision,
      lastAttemptedRevision: row.lastAttemptedRevision,
      lastTransitionAt: row.lastTransitionAt,
      desired: want,
      ...(desired.problem ? { desiredProblem: desired.problem } : {}),
      applied: latest && have ? { version: latest.version, appliedAt: latest.appliedAt, revision: latest.revision, actor: latest.actor, manifest: have } : null,
      changes,
      inSync: want !== null && have !== null && changes.length === 0,
    };
  }

  async history(kind: string, name: string): Promise<HistoryView> {
    const rt = this.#rt;
    const row = this.#row(kind, name);
    const versions = rt.applied.list(row.key);
    const audit = readAudit(rt.db, { clients: 'all', object: { kind: row.kind, id: row.name }, limit: AUDIT_HISTORY_LIMIT, order: 'desc' }).entries;
    const base = {
      key: row.key,
      versions: versions.map((v, i) => ({ version: v.version, appliedAt: v.appliedAt, revision: v.revision, actor: v.actor, digest: v.specHash, current: i === 0 && row.phase !== 'Pruned' })),
      audit,
    };
    if (row.generatedBy) {
      return { ...base, mode: 'generated', revisions: [], rollback: { possible: false, reason: `generated by ${row.generatedBy}: change the ClientSet or its inputs` } };
    }
    const git = rt.config.git;
    if (git && rt.gitSource && row.path) {
      const log = await rt.gitSource.repo.fileLog(posix.join(git.path, row.path), GIT_HISTORY_LIMIT);
      return {
        ...base,
        mode: 'git',
        revisions: log.map((c) => ({ revision: c.sha, author: c.author, at: c.at, subject: c.subject, applied: c.sha === row.lastAppliedRevision })),
        rollback: { possible: log.length > 0, reason: log.length > 0 ? 'A revision of the file is committed again, by you' : 'No commit touched its file' },
      };
    }
    const possible = versions.length > 0 && row.path !== null;
    return {
      ...base,
      mode: 'directory',
      revisions: [],
      rollback: {
        possible,
        reason: possible
          ? `One of the last ${versions.length} applied versions the store keeps is written back to ${row.path}; older history needs git mode (BI_GIT_URL)`
          : 'No applied version is kept for it: rollback needs git mode (BI_GIT_URL) or a version applied since this controller keeps them',
      },
    };
  }

  /** Writes an earlier version of the object back through the one write path; answers the reconcile result. */
  async rollback(kind: string, name: string, req: RollbackRequest, caller: Principal): Promise<{ result: ReconcileResult; to: string }> {
    const rt = this.#rt;
    const row = this.#row(kind, name);
    if (row.generatedBy) throw new ConflictError(`${row.key} is generated by ${row.generatedBy}: change the ClientSet or its inputs`);
    if (!row.path) throw new ConflictError(`${row.key} has no file to write back`);
    if (!/\.ya?ml$/i.test(row.path)) throw new ConflictError(`${row.key} is defined in ${row.path}: a rollback writes YAML, restore that file by hand`);
    let manifest: Manifest;
    let to: string;
    const git = rt.config.git;
    if (req.revision !== undefined) {
      if (!git || !rt.gitSource) throw new ValidationError([{ path: 'revision', message: 'needs git mode (BI_GIT_URL); in directory mode roll back to an applied version' }]);
      if (!/^[0-9a-f]{7,40}$/i.test(req.revision)) throw new ValidationError([{ path: 'revision', message: 'must be a commit SHA (7 to 40 hex digits)' }]);
      const text = await rt.gitSource.repo.fileAt(req.revision, posix.join(git.path, row.path));
      if (text === null) throw new NotFoundError(`${row.path} does not exist at ${req.revision}`);
      const parsed = parseManifest(row.path, text, rt.schemas);
      if (!parsed.ok) throw new ConflictError(`${row.path} at ${req.revision} is not a valid manifest: ${parsed.problems.map(formatProblem).join('; ')}`);
      if (parsed.key !== row.key) throw new ConflictError(`${row.path} at ${req.revision} defines ${parsed.key}, not ${row.key}`);
      // The file as it was written at that revision (defaults are filled in again when it is applied).
      const written = readDocument(row.path, text);
      manifest = 'value' in written ? (written.value as Manifest) : parsed.manifest;
      to = req.revision;
    } else if (req.version !== undefined) {
      const v = rt.applied.get(row.key, req.version);
      if (!v) throw new NotFoundError(`${row.key} has no applied version ${req.version}`);
      manifest = v.manifest;
      to = `version ${req.version}`;
    } else {
      throw new ValidationError([{ path: '', message: git ? 'revision or version is required' : 'version is required' }]);
    }
    const result = await rt.locks.run(row.key, () =>
      rt.submitter.submit({ relPath: row.path as string, manifest: withoutActor(manifest), caller, message: `rollback ${row.key} to ${to}`, withdrawOnFailure: false }),
    );
    appendAudit(
      rt.db,
      { actor: caller.keyId ? { type: 'key', id: caller.keyId } : { type: 'user', id: caller.userId }, action: 'rollback', object: { kind: row.kind, id: row.name }, result: result.phase === 'Synced' ? 'ok' : 'failed' },
      rt.clock,
    );
    return { result, to };
  }

  /**
   * `bictl rollback <revision>` over the API: a commit reverting `revision` on the branch, authored
   * by the caller, pushed and applied (history is never rewritten). Git mode only; audited.
   */
  async revertCommit(revision: string, caller: Principal, message?: string): Promise<{ revert: string | null; report: SyncReport; branch: string }> {
    const rt = this.#rt;
    const git = rt.config.git;
    if (!git || !rt.gitSource) throw new ConflictError('Reverting a commit needs git mode (set BI_GIT_URL); in directory mode roll an object back to an applied version');
    const source = rt.gitSource;
    const r = await rt.track(() => source.rollback(revision, userIdentity({ userId: caller.userId, username: caller.username }), message));
    appendAudit(rt.db, { actor: caller.keyId ? { type: 'key', id: caller.keyId } : { type: 'user', id: caller.userId, revision: r.revert ?? revision }, action: 'rollback', result: 'ok' }, rt.clock);
    return { ...r, branch: git.branch };
  }
}
