import type { ClientSetSpec, Input } from './types.ts';

type Waves = NonNullable<NonNullable<ClientSetSpec['rollout']>['waves']>;

/** The wave of an input: the first whose selector its fields match (the last wave when none does). */
export function waveOf(waves: Waves, input: Input): number {
  const i = waves.findIndex((w) => Object.entries(w.selector ?? {}).every(([k, v]) => input[k] !== undefined && String(input[k]) === String(v)));
  return i === -1 ? waves.length - 1 : i;
}

/**
 * Tenants of a wave of `size` updating at once: a number as given, a percentage rounded up and
 * at least 1; only the literal 0 is 0 (waits for approval).
 */
export function maxUpdateOf(maxUpdate: number | string, size: number): number {
  if (typeof maxUpdate === 'number') return maxUpdate;
  const pct = Number(maxUpdate.replace('%', ''));
  if (pct === 0) return 1;
  return Math.max(1, Math.ceil((pct * size) / 100));
}

/** A tenant as the rollout sees it: whether it waits for the new version, and how its released version is doing. */
export interface RolloutTenant {
  id: string;
  wave: number;
  /** Rendered differently from what it was released with. */
  pending: boolean;
  /** Released at the rendered version and not every object Synced yet. */
  inflight: boolean;
  /** An object of its released version failed to apply. */
  failed: boolean;
}

export interface RolloutDecision {
  /** Tenants released now. */
  release: string[];
  /** The wave being rolled out (null: nothing to roll out). */
  wave: number | null;
  paused: boolean;
  reason: string | null;
}

/**
 * One step of a rollout: wave by wave, a wave is done when none of its tenants waits or is
 * in flight; in the first wave that is not done, at most `maxUpdate` tenants are in flight; a
 * failed tenant pauses it; `0` waits. `approvedWave` releases waves up to it (pause, 0, in flight).
 */
export function planRollout(waves: Waves, tenants: RolloutTenant[], approvedWave: number): RolloutDecision {
  for (let w = 0; w < waves.length; w++) {
    const members = tenants.filter((t) => t.wave === w);
    const approved = approvedWave >= w;
    const failed = members.filter((t) => t.failed);
    const pending = members.filter((t) => t.pending).map((t) => t.id).sort();
    const inflight = members.filter((t) => t.inflight && !t.failed).length;
    if (failed.length && !approved) {
      return { release: [], wave: w, paused: true, reason: `wave ${w + 1} paused: ${failed.map((t) => t.id).sort().join(', ')} failed to apply (fix it, or approve)` };
    }
    if (pending.length === 0 && (inflight === 0 || approved)) continue;
    const limit = maxUpdateOf(waves[w].maxUpdate, members.length);
    if (limit === 0 && !approved) {
      return { release: [], wave: w, paused: false, reason: pending.length ? `wave ${w + 1} waits for approval` : null };
    }
    const slots = approved ? pending.length : Math.max(0, limit - inflight);
    return { release: pending.slice(0, slots), wave: w, paused: false, reason: null };
  }
  return { release: [], wave: null, paused: false, reason: null };
}
