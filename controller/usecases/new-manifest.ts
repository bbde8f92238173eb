import type { ReconcileResult } from '../reconciler/types.ts';
import type { SchemaRegistry } from '../manifest/validator.ts';
import type { KeyedMutex } from '../mutex.ts';
import type { Reconciler } from '../reconciler/reconciler.ts';
import type { ManifestSubmitter } from '../writers/submit.ts';
import type { Manifest, ManifestWriter, ResourceRefs } from '../types.ts';
import { ManifestNames } from '../writers/free-names.ts';
import { slugify } from '../writers/paths.ts';
import type { Principal } from '../auth/principal.ts';
import { dryRunDocument } from './dry-run.ts';

export interface NewManifestRequest<T> {
  /** Display name the manifest name is made from (slugified, suffixed `-2`, `-3`, … when taken). */
  displayName: string;
  kind: string;
  spec: Record<string, unknown>;
  caller: Principal;
  message: string;
  /** Turns the result into the answer, or throws (a result that did not apply). */
  accept(result: ReconcileResult): T;
}

/** What creating new manifests needs of the controller. */
export interface NewManifestPorts {
  readonly schemas: SchemaRegistry;
  readonly locks: KeyedMutex;
  readonly reconciler: Pick<Reconciler, 'status' | 'dryRun'>;
  readonly writer: ManifestWriter;
  readonly submitter: Pick<ManifestSubmitter, 'render' | 'submit'>;
}

/**
 * Imports that always create a new object (dashboards, pipelines): a free manifest name under
 * `dir`, reserved while the write is in flight, then the one submit path.
 */
export class NewManifests {
  readonly #rt: NewManifestPorts;
  readonly #names: ManifestNames;
  readonly #fallback: string;

  constructor(opts: { runtime: NewManifestPorts; kind: string; dir: string; fallbackName: string }) {
    this.#rt = opts.runtime;
    this.#fallback = opts.fallbackName;
    this.#names = new ManifestNames({ kind: opts.kind, dir: opts.dir, locks: opts.runtime.locks, status: opts.runtime.reconciler.status, writer: opts.runtime.writer });
  }

  /**
   * What an import would do, writing nothing: the manifest path it would get now (nothing
   * reserved) and the reconciler's dry run of the manifest it would write (throws its refusal).
   */
  async dryRun(req: Omit<NewManifestRequest<unknown>, 'message' | 'accept'>): Promise<{ relPath: string; resourceIds: ResourceRefs }> {
    const name = await this.#names.peek(this.#base(req.displayName));
    const relPath = this.#names.relPath(name);
    const manifest: Manifest = { apiVersion: 'bi.controller/v1', kind: req.kind, metadata: { name }, spec: req.spec };
    const { document } = this.#rt.submitter.render(relPath, manifest, req.caller);
    return { relPath, resourceIds: dryRunDocument(this.#rt, relPath, document, { actor: req.caller.userId }) };
  }

  async submit<T>(req: NewManifestRequest<T>): Promise<T> {
    const base = this.#base(req.displayName);
    const name = await this.#names.reserve(base);
    const manifest: Manifest = { apiVersion: 'bi.controller/v1', kind: req.kind, metadata: { name }, spec: req.spec };
    let accepted = false;
    try {
      const result = await this.#rt.submitter.submit({ relPath: this.#names.relPath(name), manifest, caller: req.caller, message: req.message });
      const answer = req.accept(result);
      accepted = true;
      return answer;
    } finally {
      // A manifest that did not apply was withdrawn: its name may be taken again.
      this.#names.release(base, name, !accepted);
    }
  }

  /** The slug of a display name, short enough for a `-<n>` suffix. */
  #base(displayName: string): string {
    return slugify(displayName, this.#fallback).slice(0, 100);
  }
}
