import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { UnavailableError } from '../../controller/errors.ts';
import { ControllerMetrics } from '../../controller/metrics/metrics.ts';
import { WorkInFlight } from '../../controller/runtime.ts';
import { makeTestRuntime } from '../helpers/runtime.ts';

describe('WorkInFlight (the write path\'s work, made before the runtime)', () => {
  it('tracks work until it settles; once stopped it refuses new work and settled() waits for the rest', async () => {
    const work = new WorkInFlight();
    let finish!: () => void;
    const pending = work.track(() => new Promise<void>((resolve) => (finish = resolve)));
    expect(work.stop()).toBe(false);
    expect(work.stop()).toBe(true);
    await expect(work.track(async () => 'late')).rejects.toBeInstanceOf(UnavailableError);
    const order: string[] = [];
    const settled = work.settled().then(() => order.push('settled'));
    await Promise.resolve();
    order.push('before finish');
    finish();
    await pending;
    await settled;
    expect(order).toEqual(['before finish', 'settled']);
  });
});

describe('ControllerMetrics before and after watch()', () => {
  it('its gauges read 0 until the parts they watch are given, then read them', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE manifests (kind TEXT, phase TEXT, name TEXT); CREATE TABLE client_status_counts (status TEXT, n INTEGER)');
    const metrics = new ControllerMetrics({ db: db as never, kinds: ['Client'] });
    const value = async (name: string) => (await metrics.registry.getSingleMetric(name)?.get())?.values[0]?.value;
    expect(await value('bi_workqueue_depth')).toBe(0);
    expect(await value('bi_notification_queue_depth')).toBe(0);
    metrics.watch({ queue: () => ({ depth: 3, running: 1, longestRunningMs: 2000 }), notificationDepth: () => 5 });
    expect(await value('bi_workqueue_depth')).toBe(3);
    expect(await value('bi_workqueue_longest_running_seconds')).toBe(2);
    expect(await value('bi_notification_queue_depth')).toBe(5);
    db.close();
  });
});

describe('createRuntime', () => {
  it('wires the parts: the reconciler\'s queue, the notifications and the purges are what the metrics read', async () => {
    const t = await makeTestRuntime();
    try {
      const text = await t.rt.metrics.registry.metrics();
      expect(text).toContain('bi_workqueue_depth 0');
      expect(text).toContain('bi_notification_queue_depth 0');
      expect(text).toContain('bi_client_purges_pending 0');
      // A write through the submitter is tracked by the runtime: refused once it stops.
      await t.rt.stop();
      await expect(t.rt.track(async () => 1)).rejects.toBeInstanceOf(UnavailableError);
    } finally {
      await t.close();
    }
  });
});
