import { formatProblem } from '../../errors.ts';
import { sha256 } from '../../hash.ts';
import { manifestKey } from '../../manifest/loader.ts';
import type { SchemaRegistry } from '../../manifest/validator.ts';
import type { ExpandRequest, Expansion, GeneratedObject, Generator } from '../../contract.ts';
import type { Store } from '../../store/db.ts';
import type { Clock, Manifest } from '../../types.ts';
import { readInputs } from './inputs.ts';
import { TemplateRenderer, type RenderedTenant } from './render.ts';
import { planRollout, waveOf, type RolloutTenant } from './rollout.ts';
import { ClientSetStore, type SetRow, type TenantRow } from './store.ts';
import type { ClientSetSpec, Input } from './types.ts';

export const CLIENTSET_KIND = 'ClientSet';

/** The status key of a set's input that is Invalid (it has no object of its own to carry the row). */
export function inputKey(setName: string, inputId: string): string {
  return `${CLIENTSET_KIND}/${setName}#${inputId}`;
}

export interface ClientSetGeneratorOptions {
  db: Store;
  schemas: SchemaRegistry;
  clock: Clock;
}

/** What one render of a set decided, before it is written. */
interface Decision {
  objects: GeneratedObject[];
  invalidInputs: Expansion['invalidInputs'];
}

/**
 * Kind ClientSet: renders a set's resources per input and decides what each tenant has desired
 * now (its new version, or the last one it was released with while a rollout has not reached it,
 * or an input read failed), behind the set's safety rules (invalid inputs, an empty set,
 * maxDeletePercent, policy). Keeps its decisions in its own tables (store.ts).
 */
export class ClientSetGenerator implements Generator {
  readonly kind = CLIENTSET_KIND;
  readonly store: ClientSetStore;
  readonly #db: Store;
  readonly #schemas: SchemaRegistry;
  readonly #clock: Clock;
  readonly #renderer: TemplateRenderer;

  constructor(opts: ClientSetGeneratorOptions) {
    this.#db = opts.db;
    this.#schemas = opts.schemas;
    this.#clock = opts.clock;
    this.store = new ClientSetStore(opts.db);
    this.#renderer = new TemplateRenderer(opts.schemas);
  }

  known(): string[] {
    return this.store.names();
  }

  inputPaths(name: string): string[] {
    return (this.store.get(name)?.spec.inputsFrom ?? []).map((f) => f.path);
  }

  /** Approves what the set holds: the current wave (a pause, a `0`) and held deletions. Returns the set, or undefined. */
  approve(name: string, digest?: string): { ok: true; set: SetRow } | { ok: false; reason: 'not-found' | 'digest'; current: string | null } {
    const set = this.store.get(name);
    if (!set) return { ok: false, reason: 'not-found', current: null };
    if (digest !== undefined && digest !== set.digest) return { ok: false, reason: 'digest', current: set.digest };
    const next = { ...set, approvedDigest: set.digest, approvedWave: set.wave ?? -1, updatedAt: this.#clock().toISOString() };
    this.store.putSet(next);
    return { ok: true, set: next };
  }

  expand(req: ExpandRequest): Expansion {
    return this.#db.transaction(() => this.#expand(req))();
  }

  #expand(req: ExpandRequest): Expansion {
    const now = this.#clock();
    const prev = this.store.get(req.name);
    const tenants = new Map(this.store.tenants(req.name).map((t) => [t.inputId, t]));
    const spec = req.manifest ? (req.manifest.spec as ClientSetSpec) : prev?.spec;
    if (!spec) return { objects: [], invalidInputs: [] };
    const set: SetRow = prev
      ? { ...prev, spec, path: req.path ?? prev.path, present: req.state !== 'removed' }
      : {
          name: req.name,
          manifestKey: manifestKey(CLIENTSET_KIND, req.name),
          path: req.path,
          spec,
          present: true,
          digest: null,
          wave: null,
          paused: false,
          reason: null,
          approvedDigest: null,
          approvedWave: -1,
          updatedAt: now.toISOString(),
        };
    const hold = (reason: string): Expansion => {
      this.store.putSet({ ...set, reason, updatedAt: now.toISOString() });
      return { objects: releasedObjects([...tenants.values()]), invalidInputs: [] };
    };
    if (req.state === 'invalid') return hold(`the ClientSet's manifest is invalid: every tenant keeps its last generated objects`);

    let inputs: Input[] = [];
    if (req.state === 'present') {
      const read = readInputs(spec, req.read, this.#schemas, sha256);
      if (!read.ok) return hold(`inputs could not be read, nothing changed: ${read.problems.map(formatProblem).join('; ')}`);
      inputs = read.inputs;
    }
    const rendered = this.#renderer.renderAll(spec, inputs);
    const digest = setDigest(rendered);
    if (digest !== set.digest) {
      this.store.addHistory(req.name, { digest, at: now.toISOString(), tenants: rendered.length });
      set.digest = digest;
    }

    const reasons: string[] = [];
    const present = new Set(inputs.map((i) => String(i.id)));
    // Tenants whose input disappeared: kept (orphaned), or offboarded under `sync` behind the guards.
    const gone = [...tenants.values()].filter((t) => !present.has(t.inputId));
    const toOffboard = spec.policy === 'sync' ? gone.filter((t) => t.gone !== 'offboarded') : [];
    let offboardNow = toOffboard.length > 0;
    const approvedHere = set.approvedDigest === digest;
    if (offboardNow && inputs.length === 0 && !spec.allowEmpty) {
      offboardNow = false;
      reasons.push(`the input set is empty and allowEmpty is false: ${toOffboard.length} tenant(s) are kept`);
    } else if (offboardNow) {
      const live = [...tenants.values()].filter((t) => t.gone !== 'offboarded').length;
      const percent = live === 0 ? 0 : (toOffboard.length * 100) / live;
      if (percent > spec.maxDeletePercent && !req.allowMassPrune && !approvedHere) {
        offboardNow = false;
        reasons.push(
          `deleting ${toOffboard.length} of ${live} tenants (${Math.round(percent)}%) is more than maxDeletePercent ${spec.maxDeletePercent}%: held until approved or bictl sync --allow-mass-prune`,
        );
      }
    }
    for (const t of gone) {
      const next = offboardNow && toOffboard.includes(t) ? 'offboarded' : t.gone === 'offboarded' ? 'offboarded' : 'orphaned';
      if (next !== t.gone) {
        t.gone = next;
        this.store.putTenant(t, now);
      }
    }

    // Inputs present: invalid ones keep what they had; new ones are created at once; changed ones wait for their wave.
    const invalidInputs: Expansion['invalidInputs'] = [];
    const waves = spec.rollout?.waves;
    const candidates = new Map<string, RenderedTenant & { ok: true }>();
    const rollout: RolloutTenant[] = [];
    for (const r of rendered) {
      const t = tenants.get(r.id);
      if (!r.ok) {
        invalidInputs.push({ inputId: r.id, reason: 'render', message: r.problems.map(formatProblem).join('; ') });
        continue;
      }
      const collision = r.keys.map((k) => [k, req.fileOf(k)] as const).find(([, file]) => file !== undefined);
      if (collision) {
        invalidInputs.push({ inputId: r.id, reason: 'conflict', message: `${collision[0]} is already defined in ${collision[1]}` });
        continue;
      }
      const wave = waves ? waveOf(waves, r.input) : null;
      if (!t) {
        const fresh: TenantRow = { setName: req.name, inputId: r.id, input: r.input, docs: r.docs, keys: r.keys, digest: r.digest, rendered: r.digest, wave, gone: null };
        tenants.set(r.id, fresh);
        this.store.putTenant(fresh, now);
        continue;
      }
      if (t.gone !== null || JSON.stringify(t.input) !== JSON.stringify(r.input) || t.wave !== wave || t.rendered !== r.digest) {
        t.gone = null;
        t.input = r.input;
        t.wave = wave;
        t.rendered = r.digest;
        this.store.putTenant(t, now);
      }
      const pending = t.digest !== r.digest && spec.policy !== 'create-only';
      if (pending) candidates.set(r.id, r);
      const phases = t.keys.map((k) => req.phaseOf(k));
      rollout.push({
        id: r.id,
        wave: wave ?? 0,
        pending,
        inflight: !pending && phases.some((p) => p !== 'Synced'),
        failed: !pending && phases.some((p) => p === 'Failed'),
      });
    }
    const decision = planRollout(waves ?? [{ maxUpdate: '100%' }], rollout, approvedHere ? set.approvedWave : -1);
    for (const id of decision.release) {
      const r = candidates.get(id);
      const t = tenants.get(id);
      if (!r || !t) continue;
      Object.assign(t, { docs: r.docs, keys: r.keys, digest: r.digest });
      this.store.putTenant(t, now);
    }
    if (decision.reason) reasons.unshift(decision.reason);
    const newlyPaused = decision.paused && !set.paused;
    this.store.putSet({ ...set, wave: decision.wave, paused: decision.paused, reason: reasons.join('; ') || null, updatedAt: now.toISOString() });
    const out: Decision = { objects: releasedObjects([...tenants.values()]), invalidInputs };
    return { ...out, ...(newlyPaused && decision.reason ? { paused: decision.reason } : {}) };
  }
}

/** Every object the set's tenants were released with; an offboarded tenant's Client is no longer desired (its other objects stay until purged). */
function releasedObjects(tenants: TenantRow[]): GeneratedObject[] {
  const out: GeneratedObject[] = [];
  for (const t of tenants) {
    t.docs.forEach((doc: Manifest, i) => {
      if (t.gone === 'offboarded' && doc.kind === 'Client') return;
      out.push({ key: t.keys[i], manifest: doc, inputId: t.inputId });
    });
  }
  return out;
}

/** The digest of a whole render: each input's digest (or its failure), in input order. */
function setDigest(rendered: RenderedTenant[]): string {
  return sha256(rendered.map((r) => `${r.id}:${r.ok ? r.digest : 'invalid'}`).join('\n'));
}
