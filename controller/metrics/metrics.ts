import type { Database, Statement } from 'better-sqlite3';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ReconcileEvent } from '../reconciler/types.ts';
import type { RunMetrics, RunOutcome } from '../runs/types.ts';

/** What the metrics read at scrape time (the queue's load). */
export interface QueueStats {
  depth: number;
  running: number;
  longestRunningMs: number;
}

export interface ControllerMetricsOptions {
  db: Database;
  /** Clients named as a `client` label at most (the failing ones first); the rest are summed as `_other`. */
  maxClientLabels?: number;
  /** The kinds an applier is registered for: the only values of a `kind` label (any other is `invalid`). */
  kinds?: readonly string[];
}

/** The parts the gauges read at scrape time, given once they are built (watch()); until then they read 0. */
export interface MetricSources {
  queue: () => QueueStats;
  /** Notifications waiting for delivery. */
  notificationDepth?: () => number;
  /** Tenants of each ClientSet per state (read at scrape time). */
  clientSetTenants?: () => { set: string; state: string; n: number }[];
  /** Purges pending (offboarded clients past retainUntil, unfinished purges). */
  purgesPending?: () => number;
}

const IDLE_QUEUE: QueueStats = { depth: 0, running: 0, longestRunningMs: 0 };

/** The `kind` label of anything that is not a registered kind (a junk file's `kind: Whatever`). */
export const INVALID_KIND = 'invalid';

/** Why an API key, a login or a session was refused: a closed set, so the label stays bounded. */
export type AuthRefusal =
  | { method: 'api_key'; reason: 'missing' | 'invalid' | 'expired' | 'rate_limited' }
  | { method: 'login'; reason: 'bad_credentials' | 'rate_limited' }
  | { method: 'session'; reason: 'missing' | 'csrf' | 'forbidden' | 'role' };

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const RUN_SECONDS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600];

/**
 * Every `bi_` metric of one controller, on its own registry (two runtimes in one process never
 * share series). Counters and histograms are fed from the reconciler's typed events, the git
 * observer, the HTTP hook and the auth guards; gauges are read from the store when scraped.
 * No label ever carries a raw ID or user input: kinds, phases, route templates, closed reasons.
 */
export class ControllerMetrics implements RunMetrics {
  readonly registry = new Registry();
  readonly #objects: Statement;
  readonly #failingClients: Statement;
  readonly #maxClients: number;
  readonly #kinds: ReadonlySet<string> | undefined;
  #sources: MetricSources | undefined;
  #defaults = false;

  readonly reconcileDuration = this.#histogram('bi_reconcile_duration_seconds', 'Time to reconcile one object (validate, apply in one transaction, record), by kind and result.', ['kind', 'result'], SECONDS);
  readonly reconcileTotal = this.#counter('bi_reconcile_total', 'Recorded reconcile results by kind and result (synced, failed, invalid, pruned, pending).', ['kind', 'result']);
  readonly pruneBlocked = this.#counter('bi_prune_blocked_total', 'Objects the mass-prune guard kept in place, by kind.', ['kind']);
  readonly gitDuration = this.#histogram('bi_git_operation_duration_seconds', 'Duration of git fetch and push against the remote.', ['operation'], SECONDS);
  readonly gitFailures = this.#counter('bi_git_operation_failures_total', 'git fetch and push operations that failed.', ['operation']);
  readonly httpDuration = this.#histogram('bi_http_request_duration_seconds', 'HTTP request duration by method, route template and status class.', ['method', 'route', 'status_class'], SECONDS);
  readonly authRefusals = this.#counter('bi_auth_refusals_total', 'Refused API keys, logins and sessions, by method and reason.', ['method', 'reason']);
  readonly runsTotal = this.#counter('bi_pipeline_runs_total', 'Finished pipeline runs by status.', ['status']);
  readonly runDuration = this.#histogram('bi_pipeline_run_duration_seconds', 'Pipeline run duration by status.', ['status'], RUN_SECONDS);
  readonly runRows = this.#counter('bi_pipeline_rows_total', 'Rows of finished pipeline runs: read, written or rejected.', ['direction']);
  readonly notifications = this.#counter('bi_notifications_total', 'Notification deliveries by notifier (one per Notifier manifest), event and result (delivered, retrying, failed).', [
    'notifier',
    'event',
    'result',
  ]);

  #counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  #histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]): Histogram<L> {
    return new Histogram({ name, help, labelNames, buckets, registers: [this.registry] });
  }

  constructor(opts: ControllerMetricsOptions) {
    this.#maxClients = opts.maxClientLabels ?? 50;
    this.#kinds = opts.kinds ? new Set(opts.kinds) : undefined;
    this.#objects = opts.db.prepare('SELECT kind, phase, COUNT(*) AS n FROM manifests GROUP BY kind, phase');
    // A Client object's name is its clientId; its dashboards and pipelines fail under their own kinds.
    this.#failingClients = opts.db.prepare(
      "SELECT name AS client, COUNT(*) AS n FROM manifests WHERE kind = 'Client' AND phase IN ('Failed', 'Invalid') GROUP BY name ORDER BY name",
    );
    const objects = new Gauge({
      name: 'bi_objects',
      help: 'Manifest objects by kind and phase (read from the status table at scrape time).',
      labelNames: ['kind', 'phase'] as const,
      registers: [this.registry],
      collect: () => {
        objects.reset();
        for (const r of this.#objects.all() as { kind: string; phase: string; n: number }[]) objects.inc({ kind: this.kindLabel(r.kind), phase: r.phase }, r.n);
      },
    });
    const failing = new Gauge({
      name: 'bi_client_failing',
      help: 'Clients (tenants) whose onboarding is Failed or Invalid: one series per failing client, at most maxClientLabels, the rest as client="_other".',
      labelNames: ['client'] as const,
      registers: [this.registry],
      collect: () => {
        failing.reset();
        const rows = this.#failingClients.all() as { client: string; n: number }[];
        rows.slice(0, this.#maxClients).forEach((r) => failing.set({ client: r.client }, 1));
        if (rows.length > this.#maxClients) failing.set({ client: '_other' }, rows.length - this.#maxClients);
      },
    });
    const clientSets = new Gauge({
      name: 'bi_clientset_tenants',
      help: 'Tenants of each ClientSet by state (Synced, Pending, Failed, Invalid, orphaned, OFFBOARDED).',
      labelNames: ['set', 'state'] as const,
      registers: [this.registry],
      collect: () => {
        clientSets.reset();
        for (const r of this.#sources?.clientSetTenants?.() ?? []) clientSets.set({ set: r.set, state: r.state }, r.n);
      },
    });
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(read());
        },
      });
    const clientStates = opts.db.prepare('SELECT status, n FROM client_status_counts');
    const clients = new Gauge({
      name: 'bi_clients',
      help: 'Clients in the registry by status (ACTIVE, FAILED, SUSPENDED, OFFBOARDED, DELETED).',
      labelNames: ['status'] as const,
      registers: [this.registry],
      collect: () => {
        for (const r of clientStates.all() as { status: string; n: number }[]) clients.set({ status: r.status }, r.n);
      },
    });
    gauge('bi_client_purges_pending', 'Purges pending: offboarded clients past their retainUntil, and purges a restart has still to finish.', () => this.#sources?.purgesPending?.() ?? 0);
    gauge('bi_workqueue_depth', 'Objects waiting in the reconcile work queue.', () => this.#queue().depth);
    gauge('bi_workqueue_running', 'Objects being reconciled now.', () => this.#queue().running);
    gauge('bi_workqueue_longest_running_seconds', 'How long the oldest reconcile in flight has been running.', () => this.#queue().longestRunningMs / 1000);
    gauge('bi_notification_queue_depth', 'Notifications waiting for delivery (first try or a retry).', () => this.#sources?.notificationDepth?.() ?? 0);
  }

  /** The parts the gauges read, once built. */
  watch(sources: MetricSources): void {
    this.#sources = sources;
  }

  #queue(): QueueStats {
    return this.#sources?.queue() ?? IDLE_QUEUE;
  }

  /** A kind as a label: a registered kind, or `invalid` (labels take fixed values only: 500 junk files are one series). */
  kindLabel(kind: string): string {
    return !this.#kinds || this.#kinds.has(kind) ? kind : INVALID_KIND;
  }

  /** A reconciler event: phase results feed the duration histogram and the result counter. */
  observeReconcile(e: ReconcileEvent): void {
    if (e.type === 'prune-blocked') this.pruneBlocked.inc({ kind: this.kindLabel(e.kind) });
    if (e.type !== 'phase') return;
    const labels = { kind: this.kindLabel(e.kind), result: e.phase.toLowerCase() };
    this.reconcileTotal.inc(labels);
    if (e.durationMs !== undefined) this.reconcileDuration.observe(labels, e.durationMs / 1000);
  }

  observeGit(op: 'fetch' | 'push', seconds: number, error?: unknown): void {
    this.gitDuration.observe({ operation: op }, seconds);
    if (error !== undefined) this.gitFailures.inc({ operation: op });
  }

  /** One answered request; `route` is the template it matched (undefined: none matched). */
  observeHttp(method: string, route: string | undefined, status: number, seconds: number): void {
    this.httpDuration.observe({ method, route: route ?? 'unmatched', status_class: `${Math.floor(status / 100)}xx` }, seconds);
  }

  authRefused(refusal: AuthRefusal): void {
    this.authRefusals.inc({ method: refusal.method, reason: refusal.reason });
  }

  /** A pipeline run finished (the run lifecycle calls this once per run). */
  observe(run: RunOutcome): void {
    this.runsTotal.inc({ status: run.status });
    this.runDuration.observe({ status: run.status }, run.durationMs / 1000);
    this.runRows.inc({ direction: 'read' }, run.rowsRead);
    this.runRows.inc({ direction: 'written' }, run.rowsWritten);
    this.runRows.inc({ direction: 'rejected' }, run.rowsRejected);
  }

  /** The text exposition; process metrics are registered on the first scrape (none of their timers run before). */
  async scrape(): Promise<{ contentType: string; body: string }> {
    if (!this.#defaults) {
      this.#defaults = true;
      collectDefaultMetrics({ register: this.registry, prefix: 'bi_' });
    }
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
