import type { Store } from '../../store/db.ts';
import type { Clock } from '../../types.ts';

/** A worker as GET /v1/reconciler/workers lists it. */
export interface WorkerView {
  name: string;
  version: string;
  heartbeatAt: string;
  state: 'up' | 'lost';
  running: string[];
  concurrency: number;
}

export interface Heartbeat {
  name: string;
  version: string;
  concurrency: number;
  running: string[];
}

interface Row {
  name: string;
  version: string;
  concurrency: number;
  running: string;
  heartbeat_at: string;
  lost_at: string | null;
}

/** A lost worker stays listed this long. */
export const LISTED_AFTER_LOST_MS = 3_600_000;

/**
 * The workers the controller has heard from (table `run_workers`, migration 0026), written from
 * their heartbeats by the controller alone. A worker is `up` while its last heartbeat is younger
 * than `lostMs`; a controller that has just started counts its own start as everyone's last
 * heartbeat, so a restart longer than `lostMs` does not lose every worker at once.
 */
export class WorkerRegistry {
  readonly #db: Store;
  readonly #clock: Clock;
  readonly #lostMs: number;
  readonly #since: number;

  constructor(opts: { db: Store; clock: Clock; lostMs: number }) {
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#lostMs = opts.lostMs;
    this.#since = opts.clock().getTime();
  }

  get lostMs(): number {
    return this.#lostMs;
  }

  heartbeat(h: Heartbeat): void {
    this.#db
      .prepare(
        `INSERT INTO run_workers (name, version, concurrency, running, heartbeat_at, lost_at) VALUES (@name, @version, @concurrency, @running, @at, NULL)
         ON CONFLICT (name) DO UPDATE SET version = @version, concurrency = @concurrency, running = @running, heartbeat_at = @at, lost_at = NULL`,
      )
      .run({ name: h.name, version: h.version, concurrency: h.concurrency, running: JSON.stringify(h.running), at: this.#clock().toISOString() });
  }

  #lost(r: Row, now: number): boolean {
    return Math.max(Date.parse(r.heartbeat_at), this.#since) + this.#lostMs <= now;
  }

  list(): WorkerView[] {
    const now = this.#clock().getTime();
    const rows = this.#db.prepare('SELECT * FROM run_workers ORDER BY name').all() as Row[];
    return rows
      .filter((r) => Date.parse(r.heartbeat_at) + this.#lostMs + LISTED_AFTER_LOST_MS > now)
      .map((r) => {
        const lost = this.#lost(r, now);
        return {
          name: r.name,
          version: r.version,
          heartbeatAt: r.heartbeat_at,
          state: lost ? 'lost' : 'up',
          running: lost ? [] : (JSON.parse(r.running) as string[]),
          concurrency: r.concurrency,
        };
      });
  }

  /** Run slots of the workers that are up. */
  capacity(): number {
    return this.list().reduce((n, w) => n + (w.state === 'up' ? w.concurrency : 0), 0);
  }

  /**
   * Workers that became lost since the last call (their `lost_at` set now); rows past the listing
   * hour are removed.
   */
  newlyLost(): string[] {
    const now = this.#clock().getTime();
    const rows = this.#db.prepare('SELECT * FROM run_workers WHERE lost_at IS NULL').all() as Row[];
    const lost = rows.filter((r) => this.#lost(r, now)).map((r) => r.name);
    const at = new Date(now).toISOString();
    const mark = this.#db.prepare('UPDATE run_workers SET lost_at = ? WHERE name = ? AND lost_at IS NULL');
    for (const name of lost) mark.run(at, name);
    const cutoff = new Date(now - this.#lostMs - LISTED_AFTER_LOST_MS).toISOString();
    this.#db.prepare('DELETE FROM run_workers WHERE heartbeat_at < ?').run(cutoff);
    return lost;
  }

  /** Whether `name` is known and up (a run claimed by a lost worker is refused). */
  isUp(name: string): boolean {
    const r = this.#db.prepare('SELECT * FROM run_workers WHERE name = ?').get(name) as Row | undefined;
    return r !== undefined && !this.#lost(r, this.#clock().getTime());
  }
}
