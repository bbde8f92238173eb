import { TooLargeError, UnavailableError } from '../errors.ts';
import { MAX_MANIFEST_BYTES, manifestKey } from '../manifest/loader.ts';
import { renderManifestYaml } from '../manifest/render.ts';
import type { Reconciler } from '../reconciler/reconciler.ts';
import type { ReconcileResult } from '../reconciler/types.ts';
import { ACTOR_ANNOTATION, type Manifest, type ManifestWriter } from '../types.ts';
import type { Principal } from '../auth/principal.ts';

export interface SubmitRequest {
  /** Where the manifest goes, relative to the manifests root (`clients/ACME.yaml`). */
  relPath: string;
  manifest: Manifest;
  caller: Principal;
  /** Commit message in git mode, e.g. `onboard client ACME`. */
  message: string;
  /**
   * When the result is not Synced, remove the manifest again (a commit reverting it in git
   * mode), so an API caller gets all or nothing. Default true.
   */
  withdrawOnFailure?: boolean;
}

export interface SubmitterOptions {
  writer: ManifestWriter;
  reconciler: Reconciler;
  /** Keeps the write in the runtime's in-flight set (a stop lets it finish). */
  track<T>(fn: () => Promise<T>): Promise<T>;
}

/**
 * The one write path of the API: write (or commit) the manifest with its caller recorded,
 * reconcile that file now, withdraw it when it did not apply, and answer the typed result.
 * Onboarding, dashboard and pipeline import and connections all go through it.
 */
export class ManifestSubmitter {
  readonly #o: SubmitterOptions;

  constructor(opts: SubmitterOptions) {
    this.#o = opts;
  }

  /** The manifest text the API would write (its loader's limits checked: nothing is written past them). */
  render(relPath: string, manifest: Manifest, caller: Principal): { text: string; document: Manifest } {
    const document: Manifest = {
      ...manifest,
      metadata: { ...manifest.metadata, annotations: { ...manifest.metadata.annotations, [ACTOR_ANNOTATION]: caller.userId } },
    };
    const text = renderManifestYaml(document);
    if (Buffer.byteLength(text) > MAX_MANIFEST_BYTES) {
      throw new TooLargeError(`the manifest ${relPath} would be larger than ${MAX_MANIFEST_BYTES} bytes, the limit of the manifest loader`);
    }
    return { text, document };
  }

  submit(req: SubmitRequest): Promise<ReconcileResult> {
    const { text, document } = this.render(req.relPath, req.manifest, req.caller);
    const { kind, metadata } = req.manifest;
    return this.#o.track(async () => {
      // The first step a page following the event stream sees: the write has started.
      this.#o.reconciler.announce(manifestKey(kind, metadata.name), kind, metadata.name, 'write manifest');
      const written = await this.#o.writer.write(req.relPath, text, this.#writeOpts(req.caller, req.message));
      // Reconciled from what was written, not read and parsed back (a clone: validation fills in defaults).
      const result = await this.#o.reconciler.reconcileFile(
        { path: req.relPath, bytes: Buffer.from(text) },
        { revision: written?.revision, author: req.caller.userId, ...(req.caller.keyId ? { keyId: req.caller.keyId } : {}) },
        structuredClone(document),
      );
      if (result.reason === 'store') {
        // 503 means not done: the file goes again before the answer, so nothing applies it later
        // and the caller's retry is the one write. (An update of an existing file stays: applying
        // it later is the same update, no duplicate.)
        if (req.withdrawOnFailure !== false) await this.#withdrawQuietly(req);
        throw new UnavailableError(result.message);
      }
      if (result.phase !== 'Synced' && req.withdrawOnFailure !== false) {
        await this.#withdraw(req.relPath, req.caller, `withdraw ${req.manifest.kind} ${req.manifest.metadata.name}: ${firstLine(result.message)}`);
      }
      return result;
    });
  }

  /** Removes a manifest the API wrote and reconciles the removal (prunes what it created). */
  withdraw(relPath: string, caller: Principal, message: string): Promise<void> {
    return this.#o.track(() => this.#withdraw(relPath, caller, message));
  }

  async #withdraw(relPath: string, caller: Principal, message: string): Promise<void> {
    await this.#o.writer.remove(relPath, this.#writeOpts(caller, message));
    await this.#o.reconciler.reconcileRemoved(relPath);
  }

  /** Withdraws a write the store could not take; a store still failing leaves nothing to prune (it never applied). */
  async #withdrawQuietly(req: SubmitRequest): Promise<void> {
    const message = `withdraw ${req.manifest.kind} ${req.manifest.metadata.name}: the store cannot take writes now`;
    await this.#o.writer.remove(req.relPath, this.#writeOpts(req.caller, message));
    try {
      await this.#o.reconciler.reconcileRemoved(req.relPath);
    } catch {
      /* the store is failing: the key was never applied, and its desired state is gone with the file */
    }
  }

  #writeOpts(caller: Principal, message: string) {
    return { actor: { userId: caller.userId, username: caller.username }, message };
  }
}

function firstLine(message: string): string {
  return message.split('\n')[0].slice(0, 200);
}
