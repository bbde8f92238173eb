import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { bearer, createApiKey, login, request, type ApiResponse, type Session } from '../../../bench/lib/api-client.ts';
import { BICTL, DEFAULT_ADMIN, ServerProcess } from '../../../bench/lib/server-process.ts';
import { findPostgresUser, PG } from '../harness.ts';

/**
 * Queue mode end to end: a real controller (`bictl serve` with BI_QUEUE_URL) and real
 * `bictl worker` processes against the local PostgreSQL — the queue in a schema of its own per
 * cluster, the pipelines' tables in another. Heartbeats every 500 ms, lost after 5 s (a loaded CI machine stalls processes for a second or more).
 */
export const TOKEN = 'worker-token-e2e-7f1c2a';
export const SECRET_KEY = 'a'.repeat(64);
export const HEARTBEAT = '500ms';
export const LOST_AFTER_MS = 5000;

export class WorkerProcess {
  readonly child: ChildProcess;
  log = '';
  readonly exited: Promise<number | null>;
  constructor(
    readonly name: string,
    env: NodeJS.ProcessEnv,
    concurrency: number,
  ) {
    this.child = spawn(process.execPath, [BICTL, 'worker', '--concurrency', String(concurrency)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (d: Buffer) => {
      this.log += d.toString('utf8');
    };
    this.child.stdout?.on('data', onData);
    this.child.stderr?.on('data', onData);
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }
  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }
  async kill9(): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
  async stop(): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const t = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(t);
  }
}

export interface RunBody {
  runId: string;
  pipelineId: string;
  status: string;
  trigger?: string;
  queuedAt?: string;
  worker?: string;
  error: string | null;
  startedAt: string | null;
  rowsWritten: number;
  steps: { name: string; type: string; status: string; rowsIn: number }[];
}

export class QueueCluster {
  readonly dir = mkdtempSync(join(tmpdir(), 'bi-queue-e2e-'));
  readonly queueSchema = `bi_q_${process.pid}_${Date.now()}`;
  readonly dataSchema = `bi_qd_${process.pid}_${Date.now()}`;
  server!: ServerProcess;
  admin!: Session;
  key!: string;
  pg!: pg.Client;
  user = 'postgres';
  readonly workers: WorkerProcess[] = [];
  pipelines = new Map<string, string>();

  get queueUrl(): string {
    return `postgres://${this.user}@${PG.host}:${PG.port}/${PG.database}`;
  }

  /** The controller's environment in queue mode (a restart reuses it). */
  serverEnv(): Record<string, string> {
    return {
      BI_QUEUE_URL: this.queueUrl,
      BI_QUEUE_SCHEMA: this.queueSchema,
      BI_WORKER_TOKEN: TOKEN,
      BI_SECRET_KEY: SECRET_KEY,
      BI_WORKER_LOST_AFTER: `${LOST_AFTER_MS}ms`,
      BI_WORKER_HEARTBEAT_INTERVAL: HEARTBEAT,
      BI_CONN_LOCAL: 'unused-with-trust-auth',
      // The schedule test fires every 2 s (the default floor is one minute).
      BI_SCHEDULE_MIN_INTERVAL: '1s',
    };
  }

  async start(): Promise<void> {
    this.user = await findPostgresUser();
    this.pg = new pg.Client({ host: PG.host, port: PG.port, database: PG.database, user: this.user });
    await this.pg.connect();
    await this.pg.query(`CREATE SCHEMA "${this.dataSchema}"`);
    mkdirSync(join(this.dir, 'manifests', 'connections'), { recursive: true });
    mkdirSync(join(this.dir, 'manifests', 'pipelines'), { recursive: true });
    this.connection('local', 'D2026A00001');
    this.connection('acme', 'D2026A00002', { owner: 'ACME' });
    this.connection('globex', 'D2026A00003', { owner: 'GLOBEX' });
    this.connection('needs-env', 'D2026A00004', { passwordEnv: 'BI_CONN_WORKER_LACKS' });
    this.server = new ServerProcess({ dir: this.dir, env: this.serverEnv(), logLevel: 'info' });
    await this.server.start(120_000);
    await this.server.waitReady();
    this.admin = await login(this.server.url, DEFAULT_ADMIN.username, DEFAULT_ADMIN.password);
    this.key = (await createApiKey(this.server.url, this.admin)).apiKey;
  }

  connection(name: string, connectionId: string, extra: { owner?: string; passwordEnv?: string } = {}): void {
    const lines = [
      'apiVersion: bi.controller/v1',
      'kind: Connection',
      `metadata: { name: ${name} }`,
      'spec:',
      `  connectionId: ${connectionId}`,
      `  name: ${name}`,
      '  vendor: POSTGRESQL',
      `  host: ${PG.host}`,
      `  port: ${PG.port}`,
      `  database: ${PG.database}`,
      `  schema: ${this.dataSchema}`,
      `  username: ${this.user}`,
      ...(extra.owner ? [`  owner: ${extra.owner}`] : []),
      ...(extra.passwordEnv ? [`  passwordEnv: ${extra.passwordEnv}`] : []),
    ];
    writeFileSync(join(this.dir, 'manifests', 'connections', `${name}.yaml`), `${lines.join('\n')}\n`);
  }

  /** A pipeline `name` copying `source` (a table or view of the data schema) into `target` (replace). */
  pipeline(name: string, source: string, target: string, connectionId = 'D2026A00001', cronExpression?: string): void {
    const y = [
      'apiVersion: bi.controller/v1',
      'kind: Pipeline',
      `metadata: { name: ${name} }`,
      'spec:',
      `  name: ${name}`,
      `  source: { connectionId: ${connectionId}, type: database, config: { schemaName: ${this.dataSchema}, tableName: ${source} } }`,
      `  destination: { connectionId: ${connectionId}, schemaName: ${this.dataSchema} }`,
      '  steps:',
      `    - { type: load, config: { tableName: ${target}, mode: replace } }`,
      ...(cronExpression ? [`  schedule: { isEnabled: true, frequency: cron, cronExpression: '${cronExpression}' }`] : []),
    ];
    writeFileSync(join(this.dir, 'manifests', 'pipelines', `${name}.yaml`), `${y.join('\n')}\n`);
  }

  /** Syncs the manifests and learns the pipelines' IDs. */
  async sync(): Promise<void> {
    const res = await this.req('POST', '/v1/reconciler/sync', undefined, this.admin.headers);
    if (res.status >= 300) throw new Error(`sync ${res.status} ${res.text}`);
    const list = await this.req('GET', `/v1/bi/admin/pipelines/${this.admin.userId}`, undefined, this.admin.headers);
    for (const p of (list.json as { pipelines: { pipelineId: string; name: string }[] }).pipelines) this.pipelines.set(p.name, p.pipelineId);
  }

  req(method: string, path: string, body?: unknown, headers: Record<string, string> = bearer(this.key)): Promise<ApiResponse> {
    return request(`${this.server.url}${path}`, { method, body, headers });
  }

  async startRun(name: string): Promise<RunBody> {
    const id = this.pipelines.get(name);
    if (!id) throw new Error(`no pipeline ${name}`);
    const res = await this.req('POST', `/v1/sdk/pipelines/${id}/runs`);
    if (res.status !== 202) throw new Error(`start ${name}: ${res.status} ${res.text}`);
    return (res.json as { run: RunBody }).run;
  }

  async run(runId: string): Promise<RunBody> {
    const res = await this.req('GET', `/v1/sdk/pipeline-runs/${runId}`);
    return (res.json as { run: RunBody }).run;
  }

  async until(runId: string, done: (r: RunBody) => boolean, timeoutMs = 60_000): Promise<RunBody> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.run(runId);
      if (done(r)) return r;
      if (Date.now() > deadline) throw new Error(`run ${runId} still ${r.status} after ${timeoutMs} ms: ${JSON.stringify(r)}\nserver log tail:\n${this.server.log.slice(-3000)}\n${this.workers.map((w) => `worker ${w.name}:\n${w.log.slice(-2000)}`).join('\n')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  ended(runId: string, timeoutMs?: number): Promise<RunBody> {
    return this.until(runId, (r) => !['queued', 'running'].includes(r.status), timeoutMs);
  }

  workerEnv(name: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      BI_QUEUE_URL: this.queueUrl,
      BI_QUEUE_SCHEMA: this.queueSchema,
      BI_CONTROLLER_URL: this.server.url,
      BI_WORKER_TOKEN: TOKEN,
      BI_WORKER_NAME: name,
      BI_WORKER_HEARTBEAT_INTERVAL: HEARTBEAT,
      BI_SECRET_KEY: SECRET_KEY,
      BI_CONN_LOCAL: 'unused-with-trust-auth',
      BI_LOG_LEVEL: 'info',
      ...extra,
    };
  }

  /** Starts `bictl worker` and waits until the controller lists it up. */
  async worker(name: string, opts: { concurrency?: number; env?: Record<string, string> } = {}): Promise<WorkerProcess> {
    const w = new WorkerProcess(name, this.workerEnv(name, opts.env), opts.concurrency ?? 2);
    this.workers.push(w);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const list = await this.workersList();
      if (list.some((x) => x.name === name && x.state === 'up') && w.log.includes('worker started')) return w;
      if (!w.running) throw new Error(`worker ${name} exited: ${w.log}`);
      if (Date.now() > deadline) throw new Error(`worker ${name} not up: ${w.log}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async workersList(): Promise<{ name: string; state: string; running: string[]; version: string; concurrency: number; heartbeatAt: string }[]> {
    const res = await this.req('GET', '/v1/reconciler/workers', undefined, this.admin.headers);
    if (res.status !== 200) throw new Error(`workers ${res.status} ${res.text}`);
    return (res.json as { workers: [] }).workers;
  }

  async restartServer(): Promise<void> {
    await this.server.stop();
    const port = this.server.opts.port;
    this.server = new ServerProcess({ dir: this.dir, env: this.serverEnv(), logLevel: 'info', port });
    await this.server.start(120_000);
    await this.server.waitReady();
    this.admin = await login(this.server.url, DEFAULT_ADMIN.username, DEFAULT_ADMIN.password);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.kill9()));
    await this.server?.stop();
    await this.pg?.query(`DROP SCHEMA IF EXISTS "${this.dataSchema}" CASCADE`).catch(() => undefined);
    await this.pg?.query(`DROP SCHEMA IF EXISTS "${this.queueSchema}" CASCADE`).catch(() => undefined);
    await this.pg?.end().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
