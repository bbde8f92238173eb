import { describe, expect, it } from 'vitest';
import { maxUpdateOf, planRollout, waveOf, type RolloutTenant } from '../../../../controller/kinds/clientset/rollout.ts';

const tenant = (id: string, wave: number, s: Partial<RolloutTenant> = {}): RolloutTenant => ({ id, wave, pending: false, inflight: false, failed: false, ...s });

describe('ClientSet rollout', () => {
  it('maxUpdate: percentages round up and are at least 1; only the literal 0 waits', () => {
    expect([maxUpdateOf('25%', 10), maxUpdateOf('1%', 10), maxUpdateOf('0%', 10), maxUpdateOf('100%', 7), maxUpdateOf(2, 10), maxUpdateOf(0, 10)]).toEqual([3, 1, 1, 7, 2, 0]);
  });

  it('a tenant is in the first wave its selector matches, else the last', () => {
    const waves: Parameters<typeof waveOf>[0] = [{ selector: { tier: 'canary' }, maxUpdate: 1 }, { selector: { region: 'eu' }, maxUpdate: 1 }, { selector: {}, maxUpdate: 1 }];
    expect([waveOf(waves, { id: 'A', tier: 'canary', region: 'eu' }), waveOf(waves, { id: 'B', region: 'eu' }), waveOf(waves, { id: 'C', region: 'us' })]).toEqual([0, 1, 2]);
    expect(waveOf([{ selector: { tier: 'canary' }, maxUpdate: 1 }], { id: 'D' })).toBe(0);
  });

  it('wave k+1 starts when wave k is done; at most maxUpdate in flight; a failure pauses; approval releases', () => {
    const waves = [{ selector: {}, maxUpdate: 1 }, { selector: {}, maxUpdate: '50%' }];
    // Wave 1 still has a tenant in flight: nothing of wave 2 moves.
    expect(planRollout(waves, [tenant('A', 0, { inflight: true }), tenant('B', 1, { pending: true })], -1)).toEqual({ release: [], wave: 0, paused: false, reason: null });
    // Wave 1 done: half of wave 2 (rounded up) goes.
    expect(planRollout(waves, [tenant('A', 0), tenant('B', 1, { pending: true }), tenant('C', 1, { pending: true }), tenant('D', 1, { pending: true })], -1).release).toEqual(['B', 'C']);
    const failed = [tenant('A', 0, { failed: true }), tenant('B', 1, { pending: true })];
    expect(planRollout(waves, failed, -1)).toEqual({ release: [], wave: 0, paused: true, reason: 'wave 1 paused: A failed to apply (fix it, or approve)' });
    expect(planRollout(waves, failed, 0)).toEqual({ release: ['B'], wave: 1, paused: false, reason: null });
    expect(planRollout([{ selector: {}, maxUpdate: 0 }], [tenant('A', 0, { pending: true })], -1)).toEqual({ release: [], wave: 0, paused: false, reason: 'wave 1 waits for approval' });
  });
});
