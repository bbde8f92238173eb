import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { createUserWithKey, loginAs } from '../../helpers/auth.ts';
import { allLabels, scrape, value } from '../../helpers/metrics.ts';
import { makeTestApp, makeTestRuntime, manifest, withApp, type TestApp } from '../../helpers/runtime.ts';

/** Any ID the controller issues (F2026A00001, U2026A00001, SM2026A00001, …): never a label value. */
const RAW_ID = /[A-Z]{1,2}\d{4}A\d{5}/;

describe('GET /metrics', () => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('is open when BI_METRICS_TOKEN is unset, and serves the Prometheus text format', async () => {
    t = await makeTestApp();
    const res = await t.app.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const names = (await scrape(t.app)).families.map((f) => f.name);
    expect(names.filter((n) => !n.startsWith('bi_'))).toEqual([]);
    for (const name of [
      'bi_reconcile_duration_seconds',
      'bi_reconcile_total',
      'bi_objects',
      'bi_workqueue_depth',
      'bi_workqueue_longest_running_seconds',
      'bi_git_operation_duration_seconds',
      'bi_git_operation_failures_total',
      'bi_http_request_duration_seconds',
      'bi_auth_refusals_total',
      'bi_pipeline_runs_total',
      'bi_pipeline_run_duration_seconds',
      'bi_pipeline_rows_total',
      'bi_notifications_total',
      'bi_process_cpu_seconds_total',
      'bi_nodejs_heap_size_used_bytes',
    ]) {
      expect(names).toContain(name);
    }
  });

  it('requires the bearer BI_METRICS_TOKEN when set', async () => {
    const rt = await makeTestRuntime();
    rt.rt.config.metricsToken = 'scrape-me-please';
    t = await withApp(rt, await buildApp({ runtime: rt.rt }));
    expect((await t.app.inject({ url: '/metrics' })).statusCode).toBe(401);
    const wrong = await t.app.inject({ url: '/metrics', headers: { authorization: 'Bearer nope' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ error: 'Metrics token required' });
    expect(wrong.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect((await scrape(t.app, { authorization: 'Bearer scrape-me-please' })).families.length).toBeGreaterThan(10);
  });

  it('counts requests by route template and status class, and refusals by reason, never with raw IDs', async () => {
    t = await makeTestApp();
    const key = await createUserWithKey(t);
    await t.app.inject({ url: '/v1/sdk/dashboards/F2026A00042' });
    await t.app.inject({ url: '/v1/sdk/dashboards/F2026A00043', headers: { authorization: 'Bearer not-a-key' } });
    await t.app.inject({ url: '/v1/sdk/dashboards/F2026A00044', headers: key.headers });
    await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: 'nobody', password: 'wrong-password' } });
    const session = await loginAs(t, { role: 'member' });
    await t.app.inject({ url: `/v1/bi/admin/clients/${session.userId}`, headers: { cookie: session.cookie } });
    await t.app.inject({ url: '/no/such/F2026A00045' });
    const m = await scrape(t.app);
    const route = '/v1/sdk/dashboards/:facadeId';
    expect(value(m, 'bi_http_request_duration_seconds', { method: 'GET', route, status_class: '4xx' })).toBe(3);
    expect(value(m, 'bi_http_request_duration_seconds', { route: '/v1/auth/login', status_class: '4xx' })).toBe(1);
    expect(value(m, 'bi_http_request_duration_seconds', { route: '/v1/auth/login', status_class: '2xx' })).toBe(1);
    expect(value(m, 'bi_http_request_duration_seconds', { route: 'unmatched', status_class: '4xx' })).toBe(1);
    expect(value(m, 'bi_auth_refusals_total', { method: 'api_key', reason: 'missing' })).toBe(1);
    expect(value(m, 'bi_auth_refusals_total', { method: 'api_key', reason: 'invalid' })).toBe(1);
    expect(value(m, 'bi_auth_refusals_total', { method: 'login', reason: 'bad_credentials' })).toBe(1);
    expect(value(m, 'bi_auth_refusals_total', { method: 'session', reason: 'csrf' })).toBe(1);
    const values = allLabels(m).flatMap((l) => Object.values(l));
    expect(values).toContain(route);
    expect(values.filter((v) => RAW_ID.test(v))).toEqual([]);
  });

  it('reads objects per kind and phase and the work queue from the controller at scrape time', async () => {
    t = await makeTestApp();
    t.write('a.yaml', manifest('CoreModel', 'a', { name: 'A' }));
    t.write('b.yaml', manifest('CoreModel', 'b', { name: 'B' }));
    t.write('bad.yaml', 'kind: [');
    await t.sync();
    const m = await scrape(t.app);
    expect(value(m, 'bi_objects', { kind: 'CoreModel', phase: 'Synced' })).toBe(2);
    expect(value(m, 'bi_objects', { phase: 'Invalid' })).toBe(1);
    expect(value(m, 'bi_reconcile_total', { kind: 'CoreModel', result: 'synced' })).toBe(2);
    expect(value(m, 'bi_reconcile_duration_seconds', { kind: 'CoreModel', result: 'synced' })).toBe(2);
    expect(value(m, 'bi_workqueue_depth')).toBe(0);
    expect(value(m, 'bi_workqueue_running')).toBe(0);
    expect(value(m, 'bi_workqueue_longest_running_seconds')).toBe(0);
  });

  it('labels take fixed values only: files of unknown kinds are kind="invalid", however many there are', async () => {
    t = await makeTestApp();
    for (let i = 0; i < 40; i++) t.write(`junk/j${i}.yaml`, manifest(`Junk${i}`, `j${i}`, {}));
    t.write('junk/nokind.yaml', 'apiVersion: bi.controller/v1\nmetadata: {name: x}\n');
    t.write('core.yaml', manifest('CoreModel', 'retail', { name: 'Retail' }));
    await t.sync();
    const m = await scrape(t.app);
    expect(m.text).not.toMatch(/Junk/);
    const kinds = new Set(allLabels(m).flatMap((l) => (l.kind === undefined ? [] : [l.kind])));
    expect([...kinds].sort()).toEqual(['CoreModel', 'invalid']);
    expect(value(m, 'bi_objects', { kind: 'invalid', phase: 'Invalid' })).toBe(41);
    expect(value(m, 'bi_reconcile_total', { kind: 'invalid', result: 'invalid' })).toBe(41);
    expect(value(m, 'bi_objects', { kind: 'CoreModel', phase: 'Synced' })).toBe(1);
  });

  it('observes finished pipeline runs through RunMetrics', async () => {
    t = await makeTestApp();
    t.rt.metrics.observe({ runId: 'R1', pipelineId: 'P2026A00001', status: 'succeeded', durationMs: 2500, rowsRead: 100, rowsWritten: 90, rowsRejected: 10, error: null });
    t.rt.metrics.observe({ runId: 'R2', pipelineId: 'P2026A00001', status: 'failed', durationMs: 500, rowsRead: 5, rowsWritten: 0, rowsRejected: 0, error: 'load: boom' });
    const m = await scrape(t.app);
    expect(value(m, 'bi_pipeline_runs_total', { status: 'succeeded' })).toBe(1);
    expect(value(m, 'bi_pipeline_runs_total', { status: 'failed' })).toBe(1);
    expect(value(m, 'bi_pipeline_rows_total', { direction: 'read' })).toBe(105);
    expect(value(m, 'bi_pipeline_rows_total', { direction: 'written' })).toBe(90);
    expect(value(m, 'bi_pipeline_rows_total', { direction: 'rejected' })).toBe(10);
    expect(value(m, 'bi_pipeline_run_duration_seconds_sum', { status: 'succeeded' })).toBe(2.5);
    expect(value(m, 'bi_pipeline_run_duration_seconds', { status: 'failed' })).toBe(1);
  });
});
