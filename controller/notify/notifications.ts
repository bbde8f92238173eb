import type { Scheduler } from '../clock.ts';
import type { Logger } from '../log.ts';
import type { RunOutcome } from '../runs/types.ts';
import { isLive, type StatusRecord } from '../reconciler/status.ts';
import type { ReconcileEvent } from '../reconciler/types.ts';
import type { BackoffPolicy } from '../lib/backoff.ts';
import type { EgressPolicy } from '../runs/types.ts';
import { notificationClient } from '../kinds/ownership.ts';
import type { Store } from '../store/db.ts';
import type { Clock } from '../types.ts';
import { DeliveryQueue, type Delivery, type DeliveryResult, type Post } from './delivery.ts';
import { render } from './format.ts';
import { OutcomeTracker } from './outcomes.ts';
import { NotifierStore } from './store.ts';
import type { Notification, NotificationEvent, NotifierConfig } from './types.ts';

export interface NotificationsOptions {
  db: Store;
  /** The status rows at start (what was already announced). */
  status: StatusRecord[];
  clock: Clock;
  scheduler?: Scheduler;
  random?: () => number;
  backoff?: BackoffPolicy;
  attempts?: number;
  env?: NodeJS.ProcessEnv;
  log: Logger;
  egress?: EgressPolicy;
  post?: Post;
  /** Each delivery attempt (metrics). */
  onAttempt?(d: Delivery, result: DeliveryResult): void;
}

/**
 * The dispatcher: outcomes from the tracker go to every applied Notifier whose filters they
 * pass, rendered for its type, onto the delivery queue. Reconciler events are handled
 * synchronously and cheaply (a table read per notification); sending happens elsewhere.
 */
export class Notifications {
  readonly store: NotifierStore;
  readonly #tracker: OutcomeTracker;
  readonly #queue: DeliveryQueue;
  readonly #env: NodeJS.ProcessEnv;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #db: Store;

  constructor(opts: NotificationsOptions) {
    this.store = new NotifierStore(opts.db);
    this.#env = opts.env ?? process.env;
    this.#clock = opts.clock;
    this.#log = opts.log;
    this.#db = opts.db;
    this.#queue = new DeliveryQueue({
      scheduler: opts.scheduler,
      random: opts.random,
      backoff: opts.backoff,
      attempts: opts.attempts,
      egress: opts.egress,
      post: opts.post,
      onAttempt: (d, result, error) => {
        try {
          this.store.recordAttempt(d.notifier, d.event, result, error, this.#clock());
        } catch (err) {
          this.#log.error({ err: (err as Error).message, notifier: d.notifier }, 'notification state not recorded');
        }
        if (result !== 'delivered') this.#log.warn({ notifier: d.notifier, event: d.event, result, error }, 'notification not delivered');
        opts.onAttempt?.(d, result);
      },
    });
    this.#tracker = new OutcomeTracker({
      initial: opts.status.map((r) => ({ key: r.key, kind: r.kind, name: r.name, phase: r.phase, reason: r.reason, live: isLive(r), revision: r.lastAppliedRevision })),
      clientOf: (kind, name) => this.#clientOf(kind, name),
      emit: (n) => this.#dispatch(n),
    });
  }

  /** Messages waiting or being sent. */
  get depth(): number {
    return this.#queue.depth;
  }

  onReconcileEvent(e: ReconcileEvent): void {
    this.#tracker.onEvent(e);
  }

  /** A finished pipeline run (the run lifecycle calls this, through Runtime#runFinished). */
  onRun(run: RunOutcome): void {
    this.#tracker.onRun(run, this.#clock());
  }

  /** A client's lifecycle transition that no reconcile phase shows (suspended, purge due, purged). */
  onLifecycle(event: 'client.suspended' | 'client.purge_due' | 'client.deleted', clientId: string, message: string): void {
    this.#tracker.onLifecycle(event, clientId, message, this.#clock());
  }

  /** A git fetch or push (git mode): failures announced once until the operation succeeds. */
  onGit(op: 'fetch' | 'push', branch: string, error: string | undefined): void {
    this.#tracker.onGit(op, branch, error, this.#clock());
  }

  /** Resolves when no delivery attempt is in flight (scheduled retries do not count). */
  async idle(): Promise<void> {
    // A refused prune is grouped in a microtask: let it reach the queue first.
    await Promise.resolve();
    await this.#queue.idle();
  }

  stop(): void {
    this.#queue.stop();
  }

  #clientOf(kind: string, name: string): string | undefined {
    try {
      return notificationClient(this.#db, kind, name);
    } catch {
      // The store is failing; the notification goes out without its client.
    }
    return undefined;
  }

  #dispatch(n: Notification): void {
    let targets: NotifierConfig[];
    try {
      targets = this.store.all();
    } catch (err) {
      this.#log.error({ err: (err as Error).message }, 'notifiers not read');
      return;
    }
    for (const target of targets) {
      const routed = route(n, target);
      if (!routed) continue;
      const { body, headers } = render(routed.notification, routed.event, target, this.#env);
      this.#queue.enqueue({ notifier: target.name, event: routed.event, url: target.url, body, headers });
    }
  }
}

/**
 * Whether `target` gets `n`, under which event name, and about which of its subjects: the first
 * of the notification's names it subscribes to; only subjects of its kinds and clients (a
 * notification about no object, git's, passes a kinds filter but not a clients filter).
 */
export function route(n: Notification, target: NotifierConfig): { event: NotificationEvent; notification: Notification } | undefined {
  const event = target.events ? n.events.find((e) => target.events?.includes(e)) : n.events[0];
  if (!event) return undefined;
  if (n.subjects.length === 0) return target.clients ? undefined : { event, notification: n };
  const subjects = n.subjects.filter(
    (s) => (!target.kinds || target.kinds.includes(s.kind)) && (!target.clients || (s.clientId !== undefined && target.clients.includes(s.clientId))),
  );
  if (subjects.length === 0) return undefined;
  if (subjects.length === n.subjects.length) return { event, notification: n };
  const kept = new Set(subjects.map((s) => `${s.kind}/${s.name}`));
  const first = subjects[0];
  return {
    event,
    notification: {
      ...n,
      subjects,
      kind: first.kind,
      name: first.name,
      ...(n.changes?.blocked ? { changes: { ...n.changes, blocked: n.changes.blocked.filter((k) => kept.has(k)) } } : {}),
    },
  };
}
