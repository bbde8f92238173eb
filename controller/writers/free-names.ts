import type { KeyedMutex } from '../mutex.ts';
import { isLive, type StatusStore } from '../reconciler/status.ts';
import type { ManifestWriter } from '../types.ts';

export interface ManifestNamesOptions {
  kind: string;
  /** Folder the API writes this kind's manifests to, e.g. `dashboards`. */
  dir: string;
  locks: KeyedMutex;
  status: StatusStore;
  writer: ManifestWriter;
}

/**
 * Picks the manifest name of an import that always creates a new object: `base`, `base-2`,
 * `base-3`, … — the first that no file, no live object and no import still in flight holds.
 * Chosen under a lock, so concurrent imports of one name never pick the same file; the next
 * suffix to try is remembered per base, so the hundredth copy costs one check, not a hundred.
 */
export class ManifestNames {
  readonly #o: ManifestNamesOptions;
  readonly #inFlight = new Set<string>();
  readonly #nextSuffix = new Map<string, number>();

  constructor(opts: ManifestNamesOptions) {
    this.#o = opts;
  }

  relPath(name: string): string {
    return `${this.#o.dir}/${name}.yaml`;
  }

  /** The name an import would get now, reserving nothing (dry runs). */
  peek(base: string): Promise<string> {
    return this.#first(base);
  }

  /** Reserves a free name until `release`. */
  reserve(base: string): Promise<string> {
    return this.#o.locks.run(`${this.#o.kind}/<new names>`, async () => {
      const name = await this.#first(base);
      this.#inFlight.add(name);
      this.#nextSuffix.set(base, suffixOf(base, name) + 1);
      return name;
    });
  }

  /** The import is done; `freed` when its manifest was withdrawn, so the name may be taken again. */
  release(base: string, name: string, freed = false): void {
    this.#inFlight.delete(name);
    if (freed) this.#nextSuffix.delete(base);
  }

  async #first(base: string): Promise<string> {
    for (let n = this.#nextSuffix.get(base) ?? 1; ; n++) {
      const name = n === 1 ? base : `${base.slice(0, 120)}-${n}`;
      if (this.#inFlight.has(name)) continue;
      const status = this.#o.status.get(`${this.#o.kind}/${name}`);
      if (status && isLive(status)) continue;
      if (await this.#o.writer.exists(this.relPath(name))) continue;
      // `Regional-Sales` is taken by `regional-sales.yaml` where file names ignore case.
      if (await this.#o.writer.caseTwin?.(this.relPath(name))) continue;
      return name;
    }
  }
}

function suffixOf(base: string, name: string): number {
  return name === base ? 1 : Number(name.slice(name.lastIndexOf('-') + 1));
}
