import type { ApiNotifierDelivery } from '../generated/schema-types.ts';
import type { Database, Statement } from 'better-sqlite3';
import type { NotificationEvent, NotifierConfig, NotifierType } from './types.ts';

interface Row {
  name: string;
  type: NotifierType;
  url: string;
  secret_env: string | null;
  events: string | null;
  kinds: string | null;
  clients: string | null;
  delivered: number;
  failed: number;
  last_event: string | null;
  last_result: string | null;
  last_error: string | null;
  last_attempt_at: string | null;
}

/** The delivery state of one Notifier, as `GET /v1/reconciler/notifiers` shows it. */
export type DeliveryState = ApiNotifierDelivery;

const list = <T>(json: string | null): T[] | undefined => (json === null ? undefined : (JSON.parse(json) as T[]));

/** Reads the applied Notifiers and records how their deliveries went. */
export class NotifierStore {
  readonly #all: Statement;
  readonly #result: Statement;

  constructor(db: Database) {
    this.#all = db.prepare('SELECT * FROM notifiers ORDER BY name');
    this.#result = db.prepare(`UPDATE notifiers SET
        delivered = delivered + @delivered, failed = failed + @failed,
        last_event = @event, last_result = @result, last_error = @error, last_attempt_at = @at
      WHERE name = @name`);
  }

  all(): NotifierConfig[] {
    return (this.#all.all() as Row[]).map((r) => ({
      name: r.name,
      type: r.type,
      url: r.url,
      ...(r.secret_env ? { secretEnv: r.secret_env } : {}),
      ...(r.events ? { events: list<NotificationEvent>(r.events) } : {}),
      ...(r.kinds ? { kinds: list<string>(r.kinds) } : {}),
      ...(r.clients ? { clients: list<string>(r.clients) } : {}),
    }));
  }

  deliveries(): DeliveryState[] {
    return (this.#all.all() as Row[]).map((r) => ({
      name: r.name,
      type: r.type,
      delivered: r.delivered,
      failed: r.failed,
      lastEvent: r.last_event,
      lastResult: r.last_result as DeliveryState['lastResult'],
      lastError: r.last_error,
      lastAttemptAt: r.last_attempt_at,
    }));
  }

  /** One attempt's outcome (a Notifier pruned meanwhile has no row: nothing to record). */
  recordAttempt(name: string, event: string, result: 'delivered' | 'retrying' | 'failed', error: string | null, at: Date): void {
    this.#result.run({
      name,
      event,
      result,
      error,
      at: at.toISOString(),
      delivered: result === 'delivered' ? 1 : 0,
      failed: result === 'failed' ? 1 : 0,
    });
  }
}
