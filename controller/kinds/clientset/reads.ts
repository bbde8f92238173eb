import type { ManifestStatus } from '../../types.ts';

/** What the reads need of the reconciler's status rows (its StatusStore answers it). */
export interface GeneratedStatusRows {
  generatedBy(setKey: string): ManifestStatus[];
}
import type { ClientSetStore, SetRow, TenantRow } from './store.ts';
import type { TenantState } from './types.ts';

export interface TenantRead {
  input: string;
  clientId: string | null;
  state: TenantState;
  message?: string;
  digest: string | null;
  wave: number | null;
}

export interface ClientSetRead {
  name: string;
  policy: SetRow['spec']['policy'];
  digest: string | null;
  inputs: number;
  present: boolean;
  tenants: TenantRead[];
  rollout: { wave: number | null; paused: boolean; reason: string | null };
  history: { digest: string; at: string; tenants: number }[];
}

/** The reads of a set (GET /v1/reconciler/clientsets/{name}, the list, bictl, the metric): its tables joined with the status rows. */
export class ClientSetReads {
  readonly #store: ClientSetStore;
  readonly #status: GeneratedStatusRows;

  constructor(opts: { store: ClientSetStore; status: GeneratedStatusRows }) {
    this.#store = opts.store;
    this.#status = opts.status;
  }

  names(): string[] {
    return this.#store.names();
  }

  read(name: string): ClientSetRead | undefined {
    const set = this.#store.get(name);
    if (!set) return undefined;
    const rows = this.#status.generatedBy(set.manifestKey);
    const invalid = new Map(rows.filter((r) => r.key.startsWith(`${set.manifestKey}#`)).map((r) => [r.inputId ?? '', r.message]));
    const phases = new Map(rows.map((r) => [r.key, r]));
    const tenants: TenantRead[] = [];
    const seen = new Set<string>();
    for (const t of this.#store.tenants(name)) {
      seen.add(t.inputId);
      tenants.push(this.#tenant(set, t, invalid.get(t.inputId), phases));
    }
    for (const [input, message] of invalid) {
      if (!seen.has(input)) tenants.push({ input, clientId: null, state: 'Invalid', message, digest: null, wave: null });
    }
    tenants.sort((a, b) => a.input.localeCompare(b.input));
    return {
      name,
      policy: set.spec.policy,
      digest: set.digest,
      inputs: tenants.filter((t) => t.state !== 'orphaned' && t.state !== 'OFFBOARDED').length,
      present: set.present,
      tenants,
      rollout: { wave: set.wave === null ? null : set.wave + 1, paused: set.paused, reason: set.reason },
      history: this.#store.history(name),
    };
  }

  /** Tenants per state, per set (the list and the metric `bi_clientset_tenants`). */
  states(read: ClientSetRead): Record<string, number> {
    const out: Record<string, number> = {};
    for (const t of read.tenants) out[t.state] = (out[t.state] ?? 0) + 1;
    return out;
  }

  #tenant(set: SetRow, t: TenantRow, invalid: string | undefined, phases: Map<string, { phase: string; message: string }>): TenantRead {
    const client = t.docs.find((d) => d.kind === 'Client');
    const clientId = client ? String((client.spec as { clientId?: unknown }).clientId ?? client.metadata.name).toUpperCase() : null;
    const base = { input: t.inputId, clientId, digest: t.digest, wave: t.wave === null ? null : t.wave + 1 };
    if (t.gone === 'offboarded') return { ...base, state: 'OFFBOARDED' };
    if (t.gone === 'orphaned') return { ...base, state: 'orphaned' };
    if (invalid !== undefined) return { ...base, state: 'Invalid', message: invalid };
    const own = t.keys.map((k) => phases.get(k));
    const failed = own.find((r) => r?.phase === 'Failed');
    if (failed) return { ...base, state: 'Failed', message: failed.message };
    const waiting = set.spec.policy !== 'create-only' && t.rendered !== null && t.rendered !== t.digest;
    return { ...base, state: !waiting && own.every((r) => r?.phase === 'Synced') ? 'Synced' : 'Pending' };
  }
}

/** Tenants per set and state (the metric `bi_clientset_tenants{set,state}`). */
export function clientSetTenantCounts(reads: ClientSetReads): { set: string; state: string; n: number }[] {
  const out: { set: string; state: string; n: number }[] = [];
  for (const name of reads.names()) {
    const set = reads.read(name);
    if (set) for (const [state, n] of Object.entries(reads.states(set))) out.push({ set: name, state, n });
  }
  return out;
}
