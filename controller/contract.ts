/**
 * The contract layer: the shapes the parts of the controller hand each other (a source's batches,
 * a reconcile's result and events, the ID issuer an applier gets). It imports nothing but the
 * generated schema types, so every layer may import it.
 */
import type { ApiPruneBlocked, ApiSyncReport } from './generated/schema-types.ts';
import type { PHASES } from './generated/schema-constants.ts';

/** The envelope every manifest file carries; `spec` is the kind's own shape. */
export interface Manifest<S = Record<string, unknown>> {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: S;
}

/** Reconcile phases, derived from schemas/api.schema.json. */
export type Phase = (typeof PHASES)[number];

/** IDs of the resources one manifest owns, as the applier reported them. */
export type ResourceRefs = Record<string, unknown>;

/** One problem found in a manifest or a request body: a dotted field path and a message. */
export interface Problem {
  path: string;
  message: string;
  /** 1-based line in the source file, when known (syntax errors; `bictl validate` locates every problem). */
  line?: number;
  /** 1-based column in the source file, with `line`. */
  column?: number;
}

/**
 * One file as a source delivers it: its bytes, or why it could not be read (too large, not a
 * regular file inside the manifests root). Paths are relative to the source's root, `/`-separated.
 */
export type SourceFile = { path: string; bytes: Buffer } | { path: string; unreadable: string };

/** What a source hands the loop: every file it has (`full`), or what changed (`delta`). */
export interface SourceBatch {
  type: 'full' | 'delta';
  /** full: every manifest file; delta: the changed ones. Consumed once, lazily (a large scan never sits in memory). */
  files: AsyncIterable<SourceFile> | Iterable<SourceFile>;
  /** delta: paths that disappeared. */
  removed?: string[];
  /** The git revision the files come from. */
  revision?: string;
  /** Per path, the author of its last change (git), else the caller of an API write. */
  authors?: Map<string, string>;
  /** Confirms a prune the mass-prune guard would refuse. */
  allowMassPrune?: boolean;
  /**
   * delta: the source may deliver one change in several batches (a folder watcher): its removals
   * wait for the mass-prune guard's window to close before they are pruned.
   */
  trickle?: boolean;
}

/** Where a source delivers its batches: the reconciler. */
export interface SourceSink {
  apply(batch: SourceBatch): Promise<SyncReport>;
}

export type PruneBlocked = ApiPruneBlocked;

/** What one batch did: the sync route's body (schemas/api.schema.json) without its envelope; `pruneBlocked` set when the guard refused a prune. */
export type SyncReport = Omit<ApiSyncReport, 'success' | 'revision' | 'pruneBlocked'> & { pruneBlocked?: PruneBlocked };

export function emptyReport(): SyncReport {
  return { scanned: 0, applied: [], skipped: 0, invalid: [], pruned: [], failed: [] };
}

/**
 * Why a key is not `Synced`, as a machine-readable reason (callers branch on it, never on the
 * message): `unreadable`, `parse` (syntax), `schema`, `conflict` (defined twice), `validate`
 * (the kind's rules and references), a failing apply step of the kind (`create model`,
 * `deploy dashboard`, …), `prune`, `prune-blocked`, `store` (the store itself failed).
 */
export type Reason = string;

/** The typed result of reconciling one key: recorded in exactly one place (status row + event). */
export interface ReconcileResult {
  key: string;
  kind: string;
  name: string;
  phase: Phase;
  reason: Reason | null;
  message: string;
  resourceIds: ResourceRefs;
  /** When the queue should run the key again (a failure's backoff); null: not until something changes. */
  retryAfterMs: number | null;
}

interface EventBase {
  key: string;
  kind: string;
  name: string;
  at: string;
}

/** A key reached a phase (every recorded result). */
export interface PhaseEvent extends EventBase {
  type: 'phase';
  phase: Phase;
  reason: Reason | null;
  message: string;
  revision: string | null;
  /** How long the run that produced this result took (absent for results no run produced). */
  durationMs?: number;
}

/** An apply step started (the UI's live progress). */
export interface StepEvent extends EventBase {
  type: 'step';
  step: string;
}

/** The mass-prune guard refused to prune this key. */
export interface PruneBlockedEvent extends EventBase {
  type: 'prune-blocked';
  message: string;
}

/** A ClientSet's rollout paused (a tenant of the current wave failed to apply). */
export interface RolloutPausedEvent extends EventBase {
  type: 'rollout-paused';
  message: string;
}

export type ReconcileEvent = PhaseEvent | StepEvent | PruneBlockedEvent | RolloutPausedEvent;

export interface PlanEntry {
  key: string;
  path: string | null;
  action: 'create' | 'update' | 'unchanged' | 'prune' | 'invalid' | 'delete' | 'orphaned';
  problems?: Problem[];
}

/** Prefixes of the `<prefix><year>A<5 digits>` IDs of docs/contract/api.md §2.1. */
export const ID_PREFIXES = {
  connection: 'D',
  semanticModel: 'SM',
  vdm: 'V',
  facade: 'F',
  experiment: 'E',
  apiKey: 'SK',
  user: 'U',
} as const;
export type IdKind = keyof typeof ID_PREFIXES;

/** Issues the IDs of docs/contract/api.md §2.1 inside an applier's transaction (store/ids.ts implements it). */
export interface IdIssuer {
  next(kind: IdKind): string;
  /** Honours a caller-chosen ID: checks its shape and reserves it. */
  pin(kind: IdKind, id: string): string;
  /** A strictly increasing millisecond stamp under `name`. */
  nextStamp(name: string): number;
}

/** One object a generator (kind ClientSet) wants desired, with the input it came from. */
export interface GeneratedObject {
  key: string;
  manifest: Manifest;
  inputId: string;
}

/** What a generator asks for one set: every object it wants desired now, and its inputs that are Invalid. */
export interface Expansion {
  objects: GeneratedObject[];
  invalidInputs: { inputId: string; reason: string; message: string }[];
  /** Set when this expansion paused the set's rollout (a notification goes out). */
  paused?: string;
}

export interface ExpandRequest {
  name: string;
  /** The set's manifest as its file defines it now; absent when the file is gone or invalid. */
  manifest?: Manifest;
  path: string | null;
  state: 'present' | 'invalid' | 'removed';
  /** `bictl sync --allow-mass-prune`: deletions past the set's maxDeletePercent go ahead. */
  allowMassPrune: boolean;
  /** The file that defines `key`, when a file does (a generated object never overwrites it). */
  fileOf(key: string): string | undefined;
  phaseOf(key: string): Phase | undefined;
  read(path: string): SourceFile | null;
}

/**
 * A kind whose manifests stand for many objects (ClientSet): the reconciler asks it what each set
 * wants desired; it keeps its own tables (what it released per tenant, rollout state).
 */
export interface Generator {
  readonly kind: string;
  expand(req: ExpandRequest): Expansion;
  /** Sets the store knows (their objects stay desired even when their file is gone or invalid). */
  known(): string[];
  /** The input files a set reads (a change of one of them renders the set again). */
  inputPaths(name: string): string[];
}

/** Who owns an object: `undefined` no such object; `null` it exists and belongs to no client (admins only). */
export type Owner = string | null | undefined;

/** A stored connection's owner; a shared connection may be used by every client. */
export interface ConnectionOwnership {
  owner: string | null;
  shared: boolean;
}

/**
 * A client whose tenant may not act (docs/contract/design.md, "Tenant lifecycle"): SUSPENDED (its
 * manifest says `suspended: true`) or OFFBOARDED (its manifest removed, retained until its purge).
 */
export type ClientHold = 'suspended' | 'offboarded';

/**
 * The ownership facet of the kinds (docs/contract/design.md, "Tenancy and authorization"): each
 * kind's store answers for its own objects, so the Authorizer asks this and knows no table.
 */
export interface Ownership {
  connection(connectionId: string): ConnectionOwnership | undefined;
  vdm(vdmId: string): Owner;
  dashboard(facadeId: string): Owner;
  pipeline(pipelineId: string): Owner;
  /** The client of a manifest's objects (status rows, events and audit entries are filtered by it); null: none. */
  manifest(key: string): string | null;
  /** The hold on a client, or undefined when its tenant may act. */
  hold(clientId: string): ClientHold | undefined;
}
