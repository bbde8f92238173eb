import type { Database, Statement } from 'better-sqlite3';
import { ID_PREFIXES, type IdIssuer, type IdKind } from '../contract.ts';
import { ValidationError } from '../errors.ts';

export { ID_PREFIXES, type IdKind } from '../contract.ts';


const SEQUENCED = /^(SM|SK|D|V|F|E|U)(\d{4})A(\d{5})$/;

/** True when `id` has the shape of the given kind, e.g. `isIdOf('vdm', 'V2026A00001')`. */
export function isIdOf(kind: IdKind, id: string): boolean {
  const m = SEQUENCED.exec(id);
  return m !== null && m[1] === ID_PREFIXES[kind];
}

/**
 * Issues IDs from per-prefix, per-year sequences kept in the store. Call it inside the
 * applier's transaction: a rolled-back apply gives its numbers back. A pinned ID moves the
 * sequence past it, so it is never issued again.
 */
export class IdAllocator implements IdIssuer {
  readonly #bump: Statement;
  readonly #read: Statement;
  readonly #counter: Statement;
  readonly #clock: () => Date;

  constructor(opts: { db: Database; clock?: () => Date }) {
    this.#clock = opts.clock ?? (() => new Date());
    this.#bump = opts.db.prepare(
      `INSERT INTO id_sequences (prefix, year, last) VALUES (@prefix, @year, @n)
       ON CONFLICT (prefix, year) DO UPDATE SET last = MAX(last, @n)`,
    );
    this.#read = opts.db.prepare('SELECT last FROM id_sequences WHERE prefix = ? AND year = ?');
    this.#counter = opts.db.prepare(
      `INSERT INTO counters (name, value) VALUES (@name, @value)
       ON CONFLICT (name) DO UPDATE SET value = MAX(value + 1, @value) RETURNING value`,
    );
  }

  next(kind: IdKind): string {
    const prefix = ID_PREFIXES[kind];
    const year = this.#clock().getUTCFullYear();
    const row = this.#read.get(prefix, year) as { last: number } | undefined;
    const n = (row?.last ?? 0) + 1;
    if (n > 99_999) throw new Error(`ID sequence ${prefix}${year} is exhausted`);
    this.#bump.run({ prefix, year, n });
    return `${prefix}${year}A${String(n).padStart(5, '0')}`;
  }

  /** Honours a caller-chosen ID: checks its shape and reserves it. */
  pin(kind: IdKind, id: string): string {
    const m = SEQUENCED.exec(id);
    if (!m || m[1] !== ID_PREFIXES[kind]) {
      throw new ValidationError([{ path: 'id', message: `${id} is not a ${kind} ID (${ID_PREFIXES[kind]}YYYYA#####)` }]);
    }
    this.#bump.run({ prefix: m[1], year: Number(m[2]), n: Number(m[3]) });
    return id;
  }

  /**
   * A strictly increasing millisecond stamp under `name` (pipeline IDs `DP-<ms>`): the clock's
   * value, or one more than the last issued when the clock has not moved on (or went back).
   */
  nextStamp(name: string): number {
    const row = this.#counter.get({ name, value: this.#clock().getTime() }) as { value: number };
    return row.value;
  }
}
