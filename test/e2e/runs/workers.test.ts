import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../../../bench/lib/api-client.ts';
import { LOST_AFTER_MS, QueueCluster, TOKEN, type RunBody } from './queue-cluster.ts';

/**
 * Runs on more than one machine (DESIGN Round 3): a real controller in queue mode and real
 * `bictl worker` processes, the queue and the pipelines' tables in the local PostgreSQL.
 */
describe('queue mode: bictl worker processes', () => {
  const c = new QueueCluster();
  const S = () => `"${c.dataSchema}"`;
  const count = async (table: string) => (await c.pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${S()}.${table}`)).rows[0].n;

  beforeAll(async () => {
    await c.start();
    await c.pg.query(`CREATE TABLE ${S()}.small AS SELECT i AS id, 'u' || i || '@x.io' AS email FROM generate_series(1, 100) i`);
    // A long source: rows flow (and the load's transaction stays open) for several seconds.
    await c.pg.query(`CREATE VIEW ${S()}.big AS SELECT i AS id, 'user' || i || '@example.io' AS email, i * 3 AS amount FROM generate_series(1, 20000000) i`);
    c.pipeline('small-copy', 'small', 'small_out');
    c.pipeline('big-copy', 'big', 'big_out');
    c.pipeline('needs-env', 'small', 'env_out', 'D2026A00004');
    for (const n of [1, 2, 3]) c.pipeline(`acme-${n}`, 'small', `acme_${n}`, 'D2026A00002');
    c.pipeline('globex-1', 'small', 'globex_1', 'D2026A00003');
    await c.sync();
  }, 120_000);
  afterAll(() => c.close(), 60_000);

  it('in queue mode with no worker up a run waits queued; it keeps its runId across a controller restart and runs on the first worker up', async () => {
    const queued = await c.startRun('small-copy');
    expect(queued.status).toBe('queued');
    await new Promise((r) => setTimeout(r, 500));
    expect((await c.run(queued.runId)).status).toBe('queued');
    await c.restartServer();
    expect((await c.run(queued.runId)).status).toBe('queued');
    await c.worker('w1');
    const done = await c.ended(queued.runId);
    expect(done.status, done.error ?? '').toBe('succeeded');
    expect(done.worker).toBe('w1');
    expect(await count('small_out')).toBe(100);
  });

  it('a worker reports with its token only: a wrong BI_WORKER_TOKEN gets 401 on every report, and a worker started with it exits without taking a job', async () => {
    const run = (await c.run((await c.startRun('small-copy')).runId)) as { runId: string };
    await c.ended(run.runId);
    for (const [path, body] of [
      ['/v1/workers/heartbeat', { name: 'evil', version: '1', concurrency: 1, running: [] }],
      [`/v1/workers/runs/${run.runId}/claim`, { worker: 'evil' }],
      [`/v1/workers/runs/${run.runId}/progress`, { worker: 'evil', steps: [] }],
      [`/v1/workers/runs/${run.runId}/finish`, { worker: 'evil', result: { status: 'succeeded', rowsRead: 0, rowsWritten: 0, rowsRejected: 0, error: null, steps: [] } }],
    ] as const) {
      for (const headers of [{}, { authorization: 'Bearer wrong-token' }, { authorization: `Bearer ${TOKEN}x` }] as Record<string, string>[]) {
        const res = await request(`${c.server.url}${path}`, { method: 'POST', body, headers });
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
      }
    }
    const bad = new (await import('./queue-cluster.ts')).WorkerProcess('bad', c.workerEnv('bad', { BI_WORKER_TOKEN: 'wrong-token' }), 1);
    expect(await bad.exited).toBe(1);
    expect(bad.log).toContain('refused BI_WORKER_TOKEN (401)');
  });

  it('GET /v1/reconciler/workers lists each worker for admins (members 403); metrics per worker; run.worker names it', async () => {
    const list = await c.workersList();
    expect((await c.req('GET', '/v1/reconciler/workers', undefined, c.admin.headers)).json).toMatchObject({ success: true, mode: 'queue' });
    const w1 = list.find((w) => w.name === 'w1');
    expect(w1).toMatchObject({ name: 'w1', state: 'up', concurrency: 2, running: [] });
    expect(w1?.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Date.parse(w1?.heartbeatAt ?? '')).toBeGreaterThan(Date.now() - 10_000);
    const created = await c.req('POST', `/v1/bi/admin/users/${c.admin.userId}`, { username: 'mia', password: 'member-password-e2e-1', role: 'member' }, c.admin.headers);
    expect(created.status, created.text).toBe(201);
    const { login } = await import('../../../bench/lib/api-client.ts');
    const member = await login(c.server.url, 'mia', 'member-password-e2e-1');
    expect((await c.req('GET', '/v1/reconciler/workers', undefined, member.headers)).status).toBe(403);
    const metrics = (await c.req('GET', '/metrics', undefined, {})).text;
    expect(metrics).toMatch(/bi_worker_up\{worker="w1"\} 1/);
    expect(metrics).toMatch(/bi_worker_runs\{worker="w1",status="succeeded"\} [1-9]/);
  });

  it('a worker lacking a credential fails that run naming what is missing, and stays up', async () => {
    const run = await c.startRun('needs-env');
    const done = await c.ended(run.runId);
    expect(done.status).toBe('failed');
    expect(done.error).toContain('BI_CONN_WORKER_LACKS');
    expect(done.error).toContain('w1');
    expect(c.workers[0].running).toBe(true);
    const next = await c.ended((await c.startRun('small-copy')).runId);
    expect(next.status).toBe('succeeded');
  });

  it('one active run per pipeline across workers: a second start is 409 while the first is queued or running', async () => {
    await c.worker('w2');
    const first = await c.startRun('big-copy');
    const again = await c.req('POST', `/v1/sdk/pipelines/${c.pipelines.get('big-copy')}/runs`);
    expect(again.status).toBe(409);
    await c.until(first.runId, (r) => r.status === 'running');
    expect((await c.req('POST', `/v1/sdk/pipelines/${c.pipelines.get('big-copy')}/runs`)).status).toBe(409);
    const cancelled = await c.req('POST', `/v1/sdk/pipeline-runs/${first.runId}/cancel`);
    expect(cancelled.status).toBe(202);
    await c.ended(first.runId);
  });

  it('cancel reaches the running worker within 5 s: the run is cancelled, its source query stopped, nothing loaded', async () => {
    await c.pg.query(`DROP TABLE IF EXISTS ${S()}.big_out`);
    const run = await c.startRun('big-copy');
    await c.until(run.runId, (r) => r.status === 'running' && r.steps.some((s) => s.rowsIn > 0));
    const t0 = Date.now();
    expect((await c.req('POST', `/v1/sdk/pipeline-runs/${run.runId}/cancel`)).status).toBe(202);
    const done = await c.ended(run.runId, 5000);
    const cancelledMs = Date.now() - t0;
    expect(done.status).toBe('cancelled');
    const sourceQueries = async () =>
      (await c.pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'COPY (SELECT * FROM "${c.dataSchema}"."big")%' AND pid <> pg_backend_pid()`)).rows[0].n;
    while ((await sourceQueries()) > 0 && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 50));
    expect(await sourceQueries()).toBe(0);
    expect(Date.now() - t0, `cancelled after ${cancelledMs} ms, source query gone after ${Date.now() - t0} ms`).toBeLessThan(5000);
    const exists = (await c.pg.query(`SELECT to_regclass('${c.dataSchema}.big_out') AS t`)).rows[0].t;
    expect(exists).toBeNull();
  });

  it('kill -9 of a worker mid-load: the destination is unchanged, the run fails interrupted once the worker is lost, and the queue does not retry it', async () => {
    await c.pg.query(`DROP TABLE IF EXISTS ${S()}.big_out`);
    await c.pg.query(`CREATE TABLE ${S()}.big_out AS SELECT 1 AS id, 'before' AS email, 7 AS amount`);
    const run = await c.startRun('big-copy');
    const running = await c.until(run.runId, (r) => r.status === 'running' && r.steps.some((s) => s.type === 'load' && s.rowsIn > 0));
    const victim = c.workers.find((w) => w.name === running.worker);
    expect(victim).toBeDefined();
    const t0 = Date.now();
    await victim?.kill9();
    const done = await c.ended(run.runId, 60_000);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/interrupted/);
    expect(done.error).toContain(running.worker);
    expect(Date.now() - t0).toBeLessThan(60_000);
    expect(await count('big_out')).toBe(1);
    expect((await c.pg.query(`SELECT email FROM ${S()}.big_out`)).rows[0].email).toBe('before');
    const lost = (await c.workersList()).find((w) => w.name === running.worker);
    expect(lost?.state).toBe('lost');
    // The surviving worker never takes the interrupted run's job.
    await new Promise((r) => setTimeout(r, LOST_AFTER_MS));
    expect((await c.run(run.runId)).status).toBe('failed');
    const metrics = (await c.req('GET', '/metrics', undefined, {})).text;
    expect(metrics).toMatch(new RegExp(`bi_worker_up\\{worker="${running.worker}"\\} 0`));
    expect(metrics).toMatch(new RegExp(`bi_worker_runs\\{worker="${running.worker}",status="failed"\\} [1-9]`));
  });

  it('tenant fairness across workers: a tenant with one waiting run starts before another tenant\'s backlog', async () => {
    for (const w of c.workers) await w.stop();
    const deadline = Date.now() + 30_000;
    while ((await c.workersList()).some((w) => w.state === 'up') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const acme = [await c.startRun('acme-1'), await c.startRun('acme-2'), await c.startRun('acme-3')];
    const globex = await c.startRun('globex-1');
    await c.worker('wf', { concurrency: 1 });
    const done = await Promise.all([...acme, globex].map((r) => c.ended(r.runId)));
    expect(done.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    const started = (r: { startedAt: string | null }) => Date.parse(r.startedAt ?? '');
    const g = done[3];
    expect(g.worker).toBe('wf');
    for (const a of done.slice(0, 3)) expect(started(g)).toBeLessThanOrEqual(started(a));
  });

  it('bictl run enqueues in queue mode: a worker runs it and the command exits 0 with the outcome', async () => {
    const { spawn } = await import('node:child_process');
    const { BICTL } = await import('../../../bench/lib/server-process.ts');
    const child = spawn(process.execPath, [BICTL, 'run', 'small-copy'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...c.serverEnv(), BI_DB_PATH: c.server.opts.dbPath, BI_MANIFESTS_DIR: c.server.opts.manifestsDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, out).toBe(0);
    const runId = /(RUN-\d+) succeeded/.exec(out)?.[1] ?? '';
    expect((await c.run(runId)).worker).toBe('wf');
  });

  it('schedules fire once across workers: each due fire is one run on one worker; fires missed while the controller is down start one run', async () => {
    await c.worker('ws2', { concurrency: 2 });
    const up = (await c.workersList()).filter((w) => w.state === 'up');
    expect(up.length).toBeGreaterThanOrEqual(2);
    c.pipeline('ticker', 'small', 'ticker_out', 'D2026A00001', '*/2 * * * * *');
    await c.sync();
    const id = c.pipelines.get('ticker') ?? '';
    const scheduled = async () => {
      const res = await c.req('GET', `/v1/sdk/pipelines/${id}/runs?limit=100`);
      return ((res.json as { runs: RunBody[] }).runs).filter((r) => r.trigger === 'schedule');
    };
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, 7_000));
    // Over the window at most one run per 2-second fire (a fire while a run is active is skipped), never two.
    const seen = await scheduled();
    const fires = Math.ceil((Date.now() - t0) / 2000) + 1;
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.length).toBeLessThanOrEqual(fires);
    const queued = seen.map((r) => Date.parse(r.queuedAt ?? ''));
    for (let i = 1; i < queued.length; i++) expect(Math.abs(queued[i] - queued[i - 1])).toBeGreaterThan(1000);
    // The controller down for ~5 s (two or three fires missed): one run on its return, not a backlog.
    const before = (await scheduled()).length;
    await c.server.stop();
    await new Promise((r) => setTimeout(r, 5_000));
    const back = Date.now();
    await c.restartServer();
    // A run still active from before the stop (its worker reports once the controller is back) makes
    // the missed fire a skip: wait for the first fire handled after the return, then stop the schedule.
    const deadline = Date.now() + 30_000;
    while ((await scheduled()).length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    c.pipeline('ticker', 'small', 'ticker_out');
    await c.sync();
    const after = await scheduled();
    const sinceBack = Math.ceil((Date.now() - back) / 2000) + 1;
    expect(after.length - before).toBeGreaterThanOrEqual(1);
    // Never a backlog: at most one run per fire since the return, the missed ones counting as one.
    expect(after.length - before).toBeLessThanOrEqual(sinceBack);
    const done = await Promise.all(after.map((r) => c.ended(r.runId)));
    for (const r of done) {
      expect(r.status, r.error ?? '').toBe('succeeded');
      expect(['wf', 'ws2']).toContain(r.worker);
    }
  }, 120_000);
});
