/** The events a Notifier can subscribe to (docs/contract/design.md "Metrics and notifications"). */
export const NOTIFICATION_EVENTS = [
  'object.failed',
  'object.recovered',
  'prune.blocked',
  'client.onboarded',
  'client.failed',
  'client.deleted',
  'client.suspended',
  'client.offboarded',
  'client.purge_due',
  'run.succeeded',
  'run.failed',
  'git.failed',
  'clientset.paused',
] as const;

export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

export type NotifierType = 'webhook' | 'slack' | 'teams';

/** The `spec` of a Notifier manifest (schemas/notifier.schema.json). */
export interface NotifierSpec {
  type: NotifierType;
  url: string;
  secretEnv?: string;
  events?: NotificationEvent[];
  kinds?: string[];
  clients?: string[];
}

/** An applied Notifier: its name and spec, as the `notifiers` table keeps them. */
export interface NotifierConfig extends NotifierSpec {
  name: string;
}

/** What changed, as far as the controller knows it. */
export interface Changes {
  /** The phase before and after this outcome. */
  phase?: { from: string | null; to: string };
  /** The revision applied before (the new one is the body's `revision`). */
  previousRevision?: string;
  /** The apply step that failed. */
  failedStep?: string;
  /** The apply steps this operation ran, in order. */
  steps?: string[];
  /** A refused prune: the objects kept and the live objects counted. */
  blocked?: string[];
  live?: number;
  /** A pipeline run's figures. */
  run?: { runId: string; status: string; durationMs: number; rowsRead: number; rowsWritten: number; rowsRejected: number };
}

/** What one notification is about: filters match on it. */
export interface Subject {
  kind: string;
  name: string;
  clientId?: string;
}

/** The webhook body, exactly as docs/contract/design.md writes it. */
export interface WebhookBody {
  event: NotificationEvent;
  kind: string;
  name: string;
  clientId?: string;
  revision?: string;
  message: string;
  changes?: Changes;
  at: string;
}

/**
 * One operation's outcome, to be sent once to each Notifier whose filters it passes. `events`
 * lists its names, the most specific first (a Client's failure is `client.failed`, and also
 * `object.failed` for a Notifier that asked only for that); a Notifier gets the first it subscribes to.
 */
export interface Notification extends Omit<WebhookBody, 'event'> {
  events: NotificationEvent[];
  /** The objects concerned (several for one refused mass prune); empty for git events. */
  subjects: Subject[];
}
