import { afterEach, describe, expect, it } from 'vitest';
import type { QueueConfig } from '../../../../controller/config.ts';
import { silentLogger } from '../../../../controller/log.ts';
import { nextFairRun } from '../../../../controller/runs/fairness.ts';
import { QueueRunDispatcher, type JobQueue } from '../../../../controller/runs/queue/dispatcher.ts';
import { JobConnectionResolver, jobConnections, type RunJob } from '../../../../controller/runs/queue/job.ts';
import { SecretStore } from '../../../../controller/secrets/store.ts';
import { secretTarget } from '../../../../controller/secrets/target.ts';
import { makeTestRuntime, manifest, type TestRuntime } from '../../../helpers/runtime.ts';
import { minimalPayload } from '../../kinds/pipeline/fixtures.ts';

class FakeJobs implements JobQueue {
  readonly added: RunJob[] = [];
  readonly removed: string[] = [];
  async add(job: RunJob): Promise<void> {
    this.added.push(job);
  }
  async remove(runId: string): Promise<void> {
    this.removed.push(runId);
  }
  async pending(runIds: readonly string[]): Promise<Set<string>> {
    return new Set(runIds.filter((id) => this.added.some((j) => j.runId === id)));
  }
  async close(): Promise<void> {}
}

const QUEUE: QueueConfig = { url: 'postgres://unused', schema: 'q', heartbeatMs: 10_000, lostMs: 30_000 };
const KEY = 'b'.repeat(64);

describe('nextFairRun as the queue mode asks it (queued and running runs counted per tenant)', () => {
  const w = (runId: string, tenant: string, queuedAt: string) => ({ runId, tenant, queuedAt: Date.parse(queuedAt) });
  const active = (entries: [string, number][]) => ({ active: new Map(entries) });
  it('the tenant with the fewest queued and running runs first; within a tenant, first come first served', () => {
    const waiting = [w('RUN-2', 'A', '2026-01-01T00:00:02Z'), w('RUN-3', 'A', '2026-01-01T00:00:03Z'), w('RUN-4', 'B', '2026-01-01T00:00:04Z')];
    expect(nextFairRun(waiting, active([['A', 3], ['B', 1]]))?.runId).toBe('RUN-4');
    expect(nextFairRun(waiting.slice(0, 2), active([['A', 3], ['B', 1]]))?.runId).toBe('RUN-2');
    expect(nextFairRun(waiting, active([['A', 1], ['B', 1]]))?.runId).toBe('RUN-2');
    expect(nextFairRun([], active([]))).toBeUndefined();
  });
});

describe('QueueRunDispatcher', () => {
  let t: TestRuntime;
  let jobs: FakeJobs;
  let d: QueueRunDispatcher;
  afterEach(async () => {
    await d?.close();
    await t.close();
  });

  async function setup(pipelines: { name: string; connectionId?: string }[], connections: Record<string, unknown>[] = []): Promise<string[]> {
    t = await makeTestRuntime();
    for (const c of connections) t.write(`connections/${c.connectionId as string}.yaml`, manifest('Connection', String(c.connectionId).toLowerCase(), c));
    for (const p of pipelines) {
      const payload = minimalPayload(p.name) as { source: { connectionId: string }; destination: { connectionId: string } };
      if (p.connectionId) {
        payload.source.connectionId = p.connectionId;
        payload.destination.connectionId = p.connectionId;
      }
      t.write(`pipelines/${p.name}.yaml`, manifest('Pipeline', p.name, payload));
    }
    await t.sync();
    jobs = new FakeJobs();
    d = new QueueRunDispatcher({
      db: t.rt.db,
      store: t.rt.runs.store,
      secrets: new SecretStore({ db: t.rt.db, secretKey: KEY }),
      clock: t.rt.clock,
      scheduler: t.scheduler.schedule,
      log: silentLogger(),
      queue: QUEUE,
      egress: () => ({ listen: { host: '127.0.0.1', port: 8080 }, allowHosts: [] }),
      jobs,
    });
    return pipelines.map((p) => (t.rt.db.prepare('SELECT pipeline_id FROM pipelines WHERE manifest_key = ?').get(`Pipeline/${p.name}`) as { pipeline_id: string }).pipeline_id);
  }
  const beat = (name: string, concurrency: number, running: string[] = []) => d.heartbeat({ name, version: '1.0.0', concurrency, running });

  it('with no worker up runs wait queued and nothing is enqueued; a heartbeat admits as many as the worker has slots', async () => {
    const [a, b, c] = await setup([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    const runs = [await d.start(a, 'api', null), await d.start(b, 'api', null), await d.start(c, 'api', null)];
    await d.settled();
    expect(jobs.added).toEqual([]);
    expect(runs.map((r) => t.rt.runs.store.get(r.runId)?.status)).toEqual(['queued', 'queued', 'queued']);
    beat('w1', 2);
    await d.settled();
    expect(jobs.added.map((j) => j.runId)).toEqual([runs[0].runId, runs[1].runId]);
    // A claimed and finished run frees its slot: the third is admitted.
    expect(d.claim(runs[0].runId, 'w1')).toBe(true);
    expect(d.claim(runs[0].runId, 'w2')).toBe(false);
    expect(d.finish(runs[0].runId, 'w1', { status: 'succeeded', rowsRead: 1, rowsWritten: 1, rowsRejected: 0, error: null, steps: [] })).toBe(true);
    await d.settled();
    expect(jobs.added.map((j) => j.runId)).toEqual(runs.map((r) => r.runId));
    expect(t.rt.runs.store.get(runs[0].runId)).toMatchObject({ status: 'succeeded', worker: 'w1' });
  });

  it('admits waiting runs round-robin across tenants: a tenant with one run does not wait behind another tenant with many', async () => {
    const conn = (id: string, owner: string) => ({ connectionId: id, name: id, vendor: 'POSTGRESQL', host: 'db.example', port: 5432, database: 'd', username: 'u', owner });
    const ids = await setup(
      [{ name: 'a1', connectionId: 'D2026A00011' }, { name: 'a2', connectionId: 'D2026A00011' }, { name: 'a3', connectionId: 'D2026A00011' }, { name: 'b1', connectionId: 'D2026A00012' }],
      [conn('D2026A00011', 'ACME'), conn('D2026A00012', 'GLOBEX')],
    );
    const runs = [];
    for (const id of ids) runs.push(await d.start(id, 'api', null));
    beat('w1', 1);
    await d.settled();
    expect(jobs.added.map((j) => j.pipelineId)).toEqual([ids[3]]);
  });

  it('a worker without heartbeats is lost: its running runs fail interrupted naming it; queued runs keep waiting', async () => {
    const [a, b] = await setup([{ name: 'a' }, { name: 'b' }]);
    beat('w1', 1);
    const run = await d.start(a, 'api', null);
    await d.settled();
    expect(d.claim(run.runId, 'w1')).toBe(true);
    const waiting = await d.start(b, 'api', null);
    t.clock.advance(29_000);
    d.sweep();
    expect(t.rt.runs.store.get(run.runId)?.status).toBe('running');
    expect(d.workers.list()[0].state).toBe('up');
    t.clock.advance(2_000);
    d.sweep();
    expect(t.rt.runs.store.get(run.runId)).toMatchObject({ status: 'failed', worker: 'w1' });
    expect(t.rt.runs.store.get(run.runId)?.error).toBe('interrupted: worker w1 was lost (no heartbeat for 30 s)');
    expect(d.workers.list()[0]).toMatchObject({ name: 'w1', state: 'lost' });
    expect(t.rt.runs.store.get(waiting.runId)?.status).toBe('queued');
    // Its late outcome changes nothing.
    expect(d.finish(run.runId, 'w1', { status: 'succeeded', rowsRead: 1, rowsWritten: 1, rowsRejected: 0, error: null, steps: [] })).toBe(false);
    // Listed for an hour after it was lost.
    t.clock.advance(3_600_000);
    d.sweep();
    expect(d.workers.list()).toEqual([]);
  });

  it('a cancel reaches a running run through its progress answer; the outcome is recorded cancelled; a queued run is cancelled at once and its job removed', async () => {
    const [a, b] = await setup([{ name: 'a' }, { name: 'b' }]);
    beat('w1', 1);
    const run = await d.start(a, 'api', null);
    await d.settled();
    d.claim(run.runId, 'w1');
    expect(d.progress(run.runId, 'w1', { steps: [] })).toEqual({ cancelRequested: false });
    await d.cancel(run.runId);
    expect(d.progress(run.runId, 'w1', {})).toEqual({ cancelRequested: true });
    expect(d.progress(run.runId, 'w2', {})).toEqual({ cancelRequested: true });
    d.finish(run.runId, 'w1', { status: 'cancelled', rowsRead: 5, rowsWritten: 0, rowsRejected: 0, error: 'cancelled', steps: [] });
    expect(t.rt.runs.store.get(run.runId)?.status).toBe('cancelled');
    const queued = await d.start(b, 'api', null);
    await d.settled();
    await d.cancel(queued.runId);
    expect(t.rt.runs.store.get(queued.runId)?.status).toBe('cancelled');
    expect(jobs.removed).toEqual([queued.runId]);
    expect(d.claim(queued.runId, 'w1')).toBe(false);
  });

  it('a worker that stops a run without a cancel leaves it failed interrupted, not cancelled', async () => {
    const [a] = await setup([{ name: 'a' }]);
    beat('w1', 1);
    const run = await d.start(a, 'api', null);
    await d.settled();
    d.claim(run.runId, 'w1');
    d.finish(run.runId, 'w1', { status: 'cancelled', rowsRead: 5, rowsWritten: 0, rowsRejected: 0, error: 'cancelled', steps: [] });
    expect(t.rt.runs.store.get(run.runId)).toMatchObject({ status: 'failed', error: 'interrupted: worker w1 stopped while the run was running' });
  });
});

describe('what a job carries', () => {
  let t: TestRuntime;
  afterEach(async () => t.close());

  it('a stored secret travels sealed (never in plaintext) and is decrypted on the worker with BI_SECRET_KEY; a worker without the key or the passwordEnv variable fails naming it', async () => {
    t = await makeTestRuntime();
    const secrets = new SecretStore({ db: t.rt.db, secretKey: KEY });
    const target = { vendor: 'POSTGRESQL' as const, host: 'db.example', port: 5432, database: 'd', username: 'u' };
    const { secretRef } = secrets.put('s3cr3t-pa55word', { target: secretTarget(target) });
    t.write('connections/sealed.yaml', manifest('Connection', 'sealed', { connectionId: 'D2026A00021', name: 'sealed', ...target, secretRef }));
    t.write('connections/byenv.yaml', manifest('Connection', 'byenv', { connectionId: 'D2026A00022', name: 'byenv', ...target, passwordEnv: 'BI_CONN_WAREHOUSE' }));
    await t.sync();
    const connections = jobConnections({ db: t.rt.db, secrets, allowed: ['D2026A00021', 'D2026A00022'], ids: ['D2026A00021', 'D2026A00022', 'D2026A00099'] });
    const json = JSON.stringify(connections);
    expect(json).not.toContain('s3cr3t-pa55word');
    expect(connections.D2026A00021).toMatchObject({ connection: { host: 'db.example', username: 'u' }, secret: { secretId: secretRef.slice('secret:'.length) } });
    expect(connections.D2026A00022).toMatchObject({ passwordEnv: 'BI_CONN_WAREHOUSE' });
    expect(connections.D2026A00099).toEqual({ error: 'Connection D2026A00099 not found' });
    const job = { connections } as RunJob;
    const on = (secretKey: string | undefined, env: NodeJS.ProcessEnv = {}) => new JobConnectionResolver(job, { secretKey, env, worker: 'w9' });
    expect(on(KEY).resolve('D2026A00021').password).toBe('s3cr3t-pa55word');
    expect(() => on(undefined).resolve('D2026A00021')).toThrow(/BI_SECRET_KEY is not set on worker w9/);
    expect(() => on('c'.repeat(64)).resolve('D2026A00021')).toThrow(/worker w9's BI_SECRET_KEY is not the key/);
    expect(on(KEY, { BI_CONN_WAREHOUSE: 'from-env' }).resolve('D2026A00022').password).toBe('from-env');
    expect(() => on(KEY).resolve('D2026A00022')).toThrow('environment variable BI_CONN_WAREHOUSE (passwordEnv) is not set on worker w9');
  });
});
