import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clientManifest, onboardingPackage, writeCoreModel } from '../../controller/kinds/client/fixtures.ts';
import { loginAs } from '../../helpers/auth.ts';
import { allLabels, scrape, value } from '../../helpers/metrics.ts';
import { startReceiver, type Receiver } from '../../helpers/receiver.ts';
import { makeTestApp, manifest, type TestApp } from '../../helpers/runtime.ts';

const SECRET_ENV = 'BI_TEST_SEQUENCE_SECRET';

/** Issue 18's "done when": one sequence, seen by a Prometheus scrape and by a webhook receiver. */
describe('onboarding, failing, recovering, pruning and running pipelines', () => {
  let t: TestApp;
  let rx: Receiver;
  beforeEach(async () => {
    process.env[SECRET_ENV] = 'sequence-secret';
    rx = await startReceiver();
    t = await makeTestApp();
  });
  afterEach(async () => {
    await t.close();
    await rx.close();
    delete process.env[SECRET_ENV];
  });

  const settle = async () => {
    await t.rt.reconciler.idle();
    await t.rt.notifications.idle();
  };

  it('the scrape and the receiver see the same figures and messages', async () => {
    t.write('notifiers/ops.yaml', manifest('Notifier', 'ops', { type: 'webhook', url: `${rx.url}/ops`, secretEnv: SECRET_ENV }));
    writeCoreModel(t);
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage('ACME')));
    await t.sync();
    await settle();

    // Failing: the package names a core model that does not exist; the loop retries it 3 times.
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage('ACME', { coreModelId: 'SM2026A09999' })));
    await t.sync();
    for (let i = 0; i < 3; i++) {
      t.scheduler.fireAll();
      await settle();
    }
    let m = await scrape(t.app);
    expect(value(m, 'bi_client_failing', { client: 'ACME' })).toBe(1);
    expect(value(m, 'bi_objects', { kind: 'Client', phase: 'Failed' })).toBe(1);

    // Recovering, then pruning (the file removed).
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage('ACME')));
    await t.sync();
    await settle();
    t.remove('clients/ACME.yaml');
    await t.sync();
    await settle();

    // Running pipelines: the run lifecycle reports each finished run.
    const run = { pipelineId: 'P2026A00001', pipelineName: 'orders', durationMs: 4000, rowsRead: 120, rowsWritten: 100, rowsRejected: 20, error: null };
    t.rt.runFinished({ ...run, runId: 'R2026A00001', status: 'succeeded' });
    t.rt.runFinished({ ...run, runId: 'R2026A00002', status: 'failed', rowsWritten: 0, error: 'load: relation "orders" does not exist', failedStep: 'load' });
    await settle();

    // The receiver: one signed message per operation and outcome, in order.
    expect(rx.received.map((r) => [r.body.event, r.body.kind, r.body.name])).toEqual([
      ['client.onboarded', 'Client', 'ACME'],
      ['client.failed', 'Client', 'ACME'],
      ['object.recovered', 'Client', 'ACME'],
      ['client.offboarded', 'Client', 'ACME'],
      ['run.succeeded', 'Pipeline', 'orders'],
      ['run.failed', 'Pipeline', 'orders'],
    ]);
    for (const r of rx.received) {
      expect(r.headers['x-signature-256']).toBe(`sha256=${createHmac('sha256', 'sequence-secret').update(r.raw).digest('hex')}`);
    }
    expect(rx.received.map((r) => r.body.message)).toEqual([
      'Client/ACME onboarded',
      'Client/ACME failed (create model): core model SM2026A09999 does not exist',
      'Client/ACME recovered: Synced',
      'Client/ACME offboarded (its manifest was removed); kept until its purge',
      'Pipeline/orders run R2026A00001 succeeded: 120 rows read, 100 written, 20 rejected',
      'Pipeline/orders run R2026A00002 failed at load: relation "orders" does not exist',
    ]);

    // The scrape: the same sequence in figures.
    m = await scrape(t.app);
    expect(value(m, 'bi_reconcile_total', { kind: 'Client', result: 'synced' })).toBe(2);
    expect(value(m, 'bi_reconcile_total', { kind: 'Client', result: 'failed' })).toBe(4);
    expect(value(m, 'bi_reconcile_total', { kind: 'Client', result: 'pruned' })).toBe(1);
    expect(value(m, 'bi_reconcile_duration_seconds', { kind: 'Client' })).toBe(7);
    expect(value(m, 'bi_reconcile_total', { kind: 'Notifier', result: 'synced' })).toBe(1);
    expect(value(m, 'bi_objects', { kind: 'Client', phase: 'Pruned' })).toBe(1);
    expect(value(m, 'bi_objects', { kind: 'CoreModel', phase: 'Synced' })).toBe(1);
    expect(value(m, 'bi_client_failing')).toBe(0);
    expect(value(m, 'bi_pipeline_runs_total', { status: 'succeeded' })).toBe(1);
    expect(value(m, 'bi_pipeline_runs_total', { status: 'failed' })).toBe(1);
    expect(value(m, 'bi_pipeline_rows_total', { direction: 'rejected' })).toBe(40);
    expect(value(m, 'bi_notifications_total', { notifier: 'ops', result: 'delivered' })).toBe(6);
    expect(value(m, 'bi_notifications_total', { notifier: 'ops', event: 'client.failed', result: 'delivered' })).toBe(1);
    expect(value(m, 'bi_notifications_total', { result: 'failed' })).toBe(0);
    expect(value(m, 'bi_notification_queue_depth')).toBe(0);
    expect(allLabels(m).flatMap((l) => Object.values(l)).filter((v) => /[A-Z]{1,2}\d{4}A\d{5}/.test(v))).toEqual([]);
    const admin = await loginAs(t);
    const state = await t.app.inject({ url: '/v1/reconciler/notifiers', headers: admin.headers });
    expect(state.statusCode).toBe(200);
    expect(state.json()).toEqual({
      notifiers: [{ name: 'ops', type: 'webhook', delivered: 6, failed: 0, lastEvent: 'run.failed', lastResult: 'delivered', lastError: null, lastAttemptAt: '2026-03-01T10:00:00.000Z' }],
    });
  });
});
