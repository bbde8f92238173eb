import type { IdIssuer, Manifest, Phase, Problem, ResourceRefs, SourceBatch, SourceFile, SourceSink, SyncReport } from './contract.ts';

export type { Manifest, Phase, Problem, ResourceRefs } from './contract.ts';
import type { Store } from './store/db.ts';


/** Annotation the API writes so the reconciler knows who asked for an object. */
export const ACTOR_ANNOTATION = 'bi.controller/requested-by';

export type Clock = () => Date;

/** What an applier gets for one reconcile of one manifest; it runs inside ONE transaction. */
export interface ApplyContext<S = Record<string, unknown>> {
  db: Store;
  ids: IdIssuer;
  now: Date;
  key: string;
  manifest: Manifest<S>;
  /** Resources the last successful apply created (update in place), if any. */
  previous: ResourceRefs | undefined;
  /** Who asked: the API user, the git author, or `controller`. */
  actor: string;
  /** Reports progress of a named step (server-sent to the UI). */
  step(name: string): void;
}

export interface PruneContext {
  db: Store;
  now: Date;
  key: string;
  name: string;
  previous: ResourceRefs;
  actor: string;
}

export interface FailureContext<S = Record<string, unknown>> {
  db: Store;
  now: Date;
  key: string;
  manifest: Manifest<S>;
  actor: string;
  error: Error;
}

/**
 * One kind's applier. `apply` and `prune` are synchronous: they run inside a better-sqlite3
 * transaction that the reconciler opens and commits (or rolls back when they throw).
 */
export interface Applier<S = Record<string, unknown>> {
  readonly kind: string;
  /** Lower applies first on a full sync: CoreModel/Connection 0, Client 1, Dashboard/Pipeline 2. */
  readonly order: number;
  apply(ctx: ApplyContext<S>): ResourceRefs;
  prune(ctx: PruneContext): void;
  /** Written in its own transaction after a failed apply was rolled back (an audit entry). */
  recordFailure?(ctx: FailureContext<S>): void;
  /** Rules beyond the JSON Schema that need no store; run before apply and by `bictl validate`. */
  lint?(manifest: Manifest<S>): Problem[];
  /** Checks that need the store (references); run before apply and by dry runs. */
  check?(db: Store, manifest: Manifest<S>): Problem[];
}

/** Status of one manifest as the API and `bictl status` show it. */
export interface ManifestStatus {
  key: string;
  kind: string;
  name: string;
  path: string | null;
  hash: string | null;
  phase: Phase;
  /** Machine-readable reason of a phase other than Synced (the failing step); null when there is none. */
  reason: string | null;
  message: string;
  attempts: number;
  nextRetryAt: string | null;
  resourceIds: ResourceRefs;
  lastAppliedRevision: string | null;
  lastAttemptedRevision: string | null;
  actor: string | null;
  lastTransitionAt: string;
  /** `ClientSet/<name>` for an object a ClientSet generated (null for a file's object). */
  generatedBy: string | null;
  /** The input (tenant) of the ClientSet that generated the object. */
  inputId: string | null;
}

/**
 * A provider of desired state (a watched folder, a git clone). It owns the disk: it reads the
 * files (inside its root only) and hands the loop `full` or `delta` batches of their content.
 */
export interface ManifestSource {
  /** Local directory holding the manifest files (where the API's writer writes). */
  readonly root: string;
  /** Where batches go (the reconciler); called once, before start or syncNow. */
  connect(sink: SourceSink): void;
  /** The first full sync, then watching (or polling). */
  start(): Promise<void>;
  /** Sync now: everything the source has, as one full batch (git: fetched first). */
  syncNow(opts?: { allowMassPrune?: boolean }): Promise<SyncReport>;
  /** Everything the source has now, without delivering it (what a sync would see). */
  snapshot(): Promise<SourceBatch>;
  /** One file as it is now; null when it is gone. */
  read(path: string): SourceFile | null;
  stop(): Promise<void>;
}

export interface WriteOptions {
  actor: { userId: string; username: string };
  /** Commit message in git mode, e.g. `onboard client ACME`. */
  message: string;
}

/** What a write recorded: in git mode, the commit now at the head of the branch. */
export interface WriteResult {
  revision?: string;
}

/** How the API records desired state: a file in the folder, or a commit in git mode. */
export interface ManifestWriter {
  write(relPath: string, content: string, opts: WriteOptions): Promise<WriteResult | void>;
  remove(relPath: string, opts: WriteOptions): Promise<WriteResult | void>;
  exists(relPath: string): Promise<boolean>;
  /** The existing file whose name differs from `relPath`'s only by case, if any (see writers/case-twin.ts). */
  caseTwin?(relPath: string): Promise<string | undefined>;
  /** Resolves once the local work that follows answered writes is done (git: the checkout of pushed commits). */
  settle?(): Promise<void>;
}
