import { boundMessage } from '../../errors.ts';
import type { ApiConnectionLastTest } from '../../generated/schema-types.ts';
import type { Store } from '../../store/db.ts';

/** The columns of a `connection_tests` row (table owned by this kind: one row a connection, its last test). */
export interface TestColumns {
  tested_at: string | null;
  ok: number | null;
  message: string | null;
  duration_ms: number | null;
  tested_by: string | null;
}

/** A `connection_tests` row as the API shows it (null: never tested from the console). */
export function lastTestOf(row: TestColumns): ApiConnectionLastTest | null {
  return row.tested_at === null ? null : { at: row.tested_at, ok: row.ok === 1, message: row.message ?? '', durationMs: row.duration_ms ?? 0, by: row.tested_by };
}

/** The last test of a stored connection (null: never tested from the console). */
export function lastConnectionTest(db: Store, connectionId: string): ApiConnectionLastTest | null {
  const row = db.statements.prepare('SELECT tested_at, ok, message, duration_ms, tested_by FROM connection_tests WHERE connection_id = ?').get(connectionId) as TestColumns | undefined;
  return row ? lastTestOf(row) : null;
}

/** Records a test of a stored connection (replacing the previous one). */
export function recordConnectionTest(db: Store, connectionId: string, result: { ok: boolean; message: string; durationMs: number }, at: Date, by: string | null): void {
  db.prepare(
    `INSERT INTO connection_tests (connection_id, tested_at, ok, message, duration_ms, tested_by) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (connection_id) DO UPDATE SET tested_at = excluded.tested_at, ok = excluded.ok, message = excluded.message,
       duration_ms = excluded.duration_ms, tested_by = excluded.tested_by`,
  ).run(connectionId, at.toISOString(), result.ok ? 1 : 0, boundMessage(result.message, 1000), Math.round(result.durationMs), by);
}
