import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clientManifest, onboardingPackage, writeCoreModel } from '../kinds/client/fixtures.ts';
import { makeTestRuntime, manifest, type TestRuntime } from '../../helpers/runtime.ts';
import { startReceiver, type Receiver } from '../../helpers/receiver.ts';

const SECRET_ENV = 'BI_TEST_NOTIFY_SECRET';
const SECRET = 'hook-secret-for-tests';

describe('Notifications', () => {
  let t: TestRuntime;
  let rx: Receiver;
  beforeEach(async () => {
    process.env[SECRET_ENV] = SECRET;
    rx = await startReceiver();
    t = await makeTestRuntime();
    writeCoreModel(t);
  });
  afterEach(async () => {
    await t.close();
    await rx.close();
    delete process.env[SECRET_ENV];
  });

  const notifier = (name: string, spec: Record<string, unknown>) => t.write(`notifiers/${name}.yaml`, manifest('Notifier', name, spec));
  const settle = async () => {
    await t.rt.reconciler.idle();
    await t.rt.notifications.idle();
  };
  /** Runs every scheduled retry (reconciles and deliveries) once, then waits for them. */
  const retryAll = async () => {
    t.scheduler.fireAll();
    await settle();
  };
  const events = (path = '/hook') => rx.received.filter((r) => r.path === path).map((r) => r.body.event);

  it('signs the webhook body with HMAC-SHA256 of the raw bytes and sends exactly the DESIGN fields', async () => {
    notifier('ops', { type: 'webhook', url: `${rx.url}/hook`, secretEnv: SECRET_ENV });
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage('ACME')));
    await t.sync();
    await settle();
    expect(rx.received).toHaveLength(1);
    const [msg] = rx.received;
    const expected = `sha256=${createHmac('sha256', SECRET).update(msg.raw).digest('hex')}`;
    expect(msg.headers['x-signature-256']).toBe(expected);
    expect(msg.headers['content-type']).toBe('application/json');
    expect(msg.body).toEqual({
      event: 'client.onboarded',
      kind: 'Client',
      name: 'ACME',
      clientId: 'ACME',
      message: 'Client/ACME onboarded',
      changes: { phase: { from: null, to: 'Synced' }, steps: expect.arrayContaining(['create model']) as unknown },
      at: '2026-03-01T10:00:00.000Z',
    });
  });

  it('a failure retried with backoff notifies once, its recovery once, and says what failed', async () => {
    notifier('ops', { type: 'webhook', url: `${rx.url}/hook` });
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage('ACME')));
    await t.sync();
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage('ACME', { coreModelId: 'SM2026A09999' })));
    await t.sync();
    await settle();
    for (let i = 0; i < 3; i++) await retryAll();
    expect(t.rt.reconciler.status.get('Client/ACME')).toMatchObject({ phase: 'Failed', attempts: 4 });
    expect(events()).toEqual(['client.onboarded', 'client.failed']);
    const failed = rx.received[1].body;
    expect(failed).toMatchObject({ kind: 'Client', name: 'ACME', clientId: 'ACME', changes: { phase: { from: 'Synced', to: 'Failed' }, failedStep: 'create model' } });
    expect(String(failed.message)).toMatch(/^Client\/ACME failed \(create model\): .*SM2026A09999/);

    t.write('clients/ACME.yaml', clientManifest(onboardingPackage('ACME')));
    await t.sync();
    await settle();
    await retryAll();
    expect(events()).toEqual(['client.onboarded', 'client.failed', 'object.recovered']);
    expect(rx.received[2].body).toMatchObject({ event: 'object.recovered', message: 'Client/ACME recovered: Synced', changes: { phase: { from: 'Failed', to: 'Synced' } } });
  });

  it('retries a delivery the receiver refused (500, then 200) with backoff, and shows the state', async () => {
    notifier('ops', { type: 'webhook', url: `${rx.url}/hook` });
    await t.sync();
    rx.failNext(500);
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage('ACME')));
    await t.sync();
    await settle();
    expect(rx.attempts).toBe(1);
    expect(rx.received).toHaveLength(0);
    expect(t.rt.notifications.store.deliveries()).toEqual([
      expect.objectContaining({ name: 'ops', delivered: 0, failed: 0, lastEvent: 'client.onboarded', lastResult: 'retrying', lastError: 'the receiver answered 500' }),
    ]);
    expect(t.rt.notifications.depth).toBe(1);
    const delays = t.scheduler.delays.length;
    await retryAll();
    expect(t.scheduler.delays.slice(delays - 1, delays)).toEqual([1000]);
    expect(rx.attempts).toBe(2);
    expect(events()).toEqual(['client.onboarded']);
    expect(t.rt.notifications.store.deliveries()[0]).toMatchObject({ delivered: 1, failed: 0, lastResult: 'delivered', lastError: null });
    expect(t.rt.notifications.depth).toBe(0);
  });

  it('gives up after the attempts and never retries a 4xx; the reconcile loop is never held', async () => {
    notifier('ops', { type: 'webhook', url: `${rx.url}/hook` });
    await t.sync();
    rx.failNext(404);
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage('ACME')));
    await t.sync();
    await settle();
    expect(t.rt.notifications.store.deliveries()[0]).toMatchObject({ delivered: 0, failed: 1, lastResult: 'failed', lastError: 'the receiver answered 404' });
    expect(t.rt.notifications.depth).toBe(0);
  });

  it('filters by event, kind and client; a Notifier gets the first of the names it subscribes to', async () => {
    notifier('onboarded', { type: 'webhook', url: `${rx.url}/onboarded`, events: ['client.onboarded'] });
    notifier('objects', { type: 'webhook', url: `${rx.url}/objects`, events: ['object.failed', 'object.recovered'] });
    notifier('models', { type: 'webhook', url: `${rx.url}/models`, kinds: ['CoreModel'] });
    notifier('other', { type: 'webhook', url: `${rx.url}/other`, clients: ['OTHER'] });
    notifier('acme', { type: 'webhook', url: `${rx.url}/acme`, clients: ['ACME'] });
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage('ACME')));
    await t.sync();
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage('ACME', { coreModelId: 'SM2026A09999' })));
    await t.sync();
    await settle();
    expect(events('/onboarded')).toEqual(['client.onboarded']);
    // A Client's failure is client.failed; a Notifier that asked for object.failed gets it under that name.
    expect(events('/objects')).toEqual(['object.failed']);
    expect(events('/models')).toEqual([]);
    expect(events('/other')).toEqual([]);
    expect(events('/acme')).toEqual(['client.onboarded', 'client.failed']);
  });

  it("a clients filter matches every object the client owns: its connections, pipelines and dashboards", async () => {
    notifier('acme', { type: 'webhook', url: `${rx.url}/acme`, clients: ['ACME'], events: ['object.failed', 'object.recovered'] });
    notifier('other', { type: 'webhook', url: `${rx.url}/other`, clients: ['OTHER'] });
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage('ACME')));
    const wh = (spec: Record<string, unknown> = {}) => manifest('Connection', 'acme-wh', { connectionId: 'D2026A00010', name: 'ACME warehouse', owner: 'ACME', ...spec });
    const pipeline = (spec: Record<string, unknown> = {}) =>
      manifest('Pipeline', 'acme-orders', { name: 'Orders', source: { connectionId: 'D2026A00010', type: 'database' }, destination: { connectionId: 'D2026A00010' }, steps: [{ type: 'load', config: { tableName: 't' } }], ...spec });
    const dash = (spec: Record<string, unknown> = {}) => manifest('Dashboard', 'acme-sales', { name: 'Sales', dataSource: { dbId: 'D2026A00010' }, charts: [{ type: 'kpi', measures: ['rev'], dimensions: [] }], ...spec });
    t.write('connections/acme-wh.yaml', wh());
    t.write('pipelines/acme-orders.yaml', pipeline());
    t.write('dashboards/acme-sales.yaml', dash());
    await t.sync();
    expect(['Connection/acme-wh', 'Pipeline/acme-orders', 'Dashboard/acme-sales'].map((k) => t.rt.reconciler.status.get(k)?.phase)).toEqual(['Synced', 'Synced', 'Synced']);
    // Each object breaks (invalid), then is fixed.
    t.write('connections/acme-wh.yaml', wh({ name: 42 }));
    t.write('pipelines/acme-orders.yaml', pipeline({ name: 42 }));
    t.write('dashboards/acme-sales.yaml', dash({ name: 42 }));
    await t.sync();
    t.write('connections/acme-wh.yaml', wh());
    t.write('pipelines/acme-orders.yaml', pipeline());
    t.write('dashboards/acme-sales.yaml', dash());
    await t.sync();
    await settle();
    const got = rx.received.filter((r) => r.path === '/acme').map((r) => `${r.body.event} ${r.body.kind}/${r.body.name} ${r.body.clientId}`);
    expect(got.sort()).toEqual(
      [
        'object.failed Connection/acme-wh ACME',
        'object.failed Pipeline/acme-orders ACME',
        'object.failed Dashboard/acme-sales ACME',
        'object.recovered Connection/acme-wh ACME',
        'object.recovered Pipeline/acme-orders ACME',
        'object.recovered Dashboard/acme-sales ACME',
      ].sort(),
    );
    expect(events('/other')).toEqual([]);
  });

  it('a refused mass prune is one message for all the objects it kept, not repeated while it stands', async () => {
    notifier('ops', { type: 'webhook', url: `${rx.url}/hook`, events: ['prune.blocked'] });
    for (const n of ['a', 'b', 'c']) t.write(`core-models/${n}.yaml`, manifest('CoreModel', n, { name: `Model ${n}` }));
    await t.sync();
    for (const n of ['a', 'b', 'c']) t.remove(`core-models/${n}.yaml`);
    t.remove('core-models/SM2026A00001.yaml');
    await t.sync();
    await t.sync();
    await settle();
    expect(events()).toEqual(['prune.blocked']);
    const body = rx.received[0].body;
    expect(body).toMatchObject({ kind: 'CoreModel', name: 'core-SM2026A00001' });
    expect((body.changes as { blocked: string[] }).blocked.sort()).toEqual(['CoreModel/a', 'CoreModel/b', 'CoreModel/c', 'CoreModel/core-SM2026A00001']);
    expect(String(body.message)).toMatch(/^prune of 4 object\(s\) refused: /);
  });

  it('sends Slack and Teams bodies their incoming webhooks accept', async () => {
    notifier('slack', { type: 'slack', url: `${rx.url}/slack` });
    notifier('teams', { type: 'teams', url: `${rx.url}/teams` });
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage('ACME')));
    await t.sync();
    await settle();
    const slack = rx.received.find((r) => r.path === '/slack')?.body;
    expect(slack?.text).toBe(':large_green_circle: [client.onboarded] Client/ACME onboarded');
    expect(slack?.blocks).toEqual([
      { type: 'section', text: { type: 'mrkdwn', text: ':large_green_circle: *client.onboarded* Client/ACME onboarded' } },
      { type: 'section', fields: expect.arrayContaining([{ type: 'mrkdwn', text: '*Object*\nClient/ACME' }]) as unknown },
    ]);
    const teams = rx.received.find((r) => r.path === '/teams')?.body;
    expect(teams).toMatchObject({
      '@type': 'MessageCard',
      '@context': 'https://schema.org/extensions',
      summary: '[client.onboarded] Client/ACME',
      themeColor: '2EB886',
      text: 'Client/ACME onboarded',
    });
    expect((teams?.sections as { facts: unknown[] }[])[0].facts).toContainEqual({ name: 'Client', value: 'ACME' });
  });

  it('refuses link-local targets at apply and the controller own address at delivery', async () => {
    notifier('meta', { type: 'webhook', url: 'http://169.254.169.254/latest' });
    notifier('self', { type: 'webhook', url: `http://127.0.0.1:${t.rt.config.port}/v1/reconciler/sync` });
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage('ACME')));
    await t.sync();
    await settle();
    expect(t.rt.reconciler.status.get('Notifier/meta')).toMatchObject({ phase: 'Failed', reason: 'validate' });
    expect(t.rt.reconciler.status.get('Notifier/meta')?.message).toContain('spec.url may not be a link-local address (169.254.0.0/16)');
    expect(t.rt.notifications.store.deliveries()).toEqual([
      expect.objectContaining({ name: 'self', delivered: 0, failed: 1, lastError: "Egress to 127.0.0.1:8080 is not allowed: it is the controller's own listening address" }),
    ]);
  });

  it('announces pipeline runs and git failures once per failure streak', async () => {
    notifier('ops', { type: 'webhook', url: `${rx.url}/hook`, events: ['run.succeeded', 'run.failed', 'git.failed'] });
    await t.sync();
    const run = { runId: 'R1', pipelineId: 'P2026A00001', pipelineName: 'orders', status: 'failed' as const, durationMs: 1500, rowsRead: 10, rowsWritten: 0, rowsRejected: 2, error: 'load: table missing', failedStep: 'load' };
    t.rt.runFinished(run);
    t.rt.runFinished({ ...run, runId: 'R2' });
    t.rt.runFinished({ ...run, runId: 'R3', status: 'succeeded', error: null, failedStep: undefined, rowsWritten: 8 });
    t.rt.notifications.onGit('fetch', 'main', 'could not read from remote');
    t.rt.notifications.onGit('fetch', 'main', 'could not read from remote');
    await settle();
    expect(events()).toEqual(['run.failed', 'run.succeeded', 'git.failed']);
    expect(rx.received[0].body).toMatchObject({
      kind: 'Pipeline',
      name: 'orders',
      message: 'Pipeline/orders run R1 failed at load: table missing',
      changes: { failedStep: 'load', run: { runId: 'R1', status: 'failed', durationMs: 1500, rowsRead: 10, rowsWritten: 0, rowsRejected: 2 } },
    });
    expect(rx.received[2].body).toMatchObject({ kind: 'Git', name: 'main', message: 'git fetch of main failed: could not read from remote' });
  });

  it('an observer that throws never fails a reconcile', async () => {
    t.rt.metrics.observeReconcile = () => {
      throw new Error('observer bug');
    };
    await t.sync();
    expect(t.rt.reconciler.status.get('CoreModel/core-SM2026A00001')).toMatchObject({ phase: 'Synced', reason: null });
  });
});
