import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { auditRecorded } from '../../controller/audit/reconcile.ts';
import { kindOwnership } from '../../controller/kinds/ownership.ts';
import type { ReconcileResult } from '../../controller/contract.ts';
import type { StatusRecord } from '../../controller/reconciler/status.ts';
import { openStore } from '../../controller/store/db.ts';

/**
 * CPU per audit entry of an API import, in µs: the product's own `auditRecorded` (the owner
 * lookup, the chain's last hash, the canonical JSON and its SHA-256, the INSERT) for `n` Dashboard
 * applies, each in a transaction of its own as an apply's, less the same `n` empty transactions.
 * Measured in this process on a store of the product's schema.
 */
export function auditCostUs(dir: string, n: number): { perWriteUs: number; entries: number } {
  mkdirSync(dir, { recursive: true });
  const db = openStore(join(dir, 'audit.sqlite'));
  try {
    const record = auditRecorded(db, () => new Date(), kindOwnership(db).manifest);
    const previous = { specHash: 'a'.repeat(64) } as StatusRecord;
    const result = (i: number): ReconcileResult => ({
      key: `Dashboard/audit-${i}`,
      kind: 'Dashboard',
      name: `audit-${i}`,
      phase: 'Synced',
      reason: null,
      message: '',
      resourceIds: { facadeId: `F2026A${String(i).padStart(5, '0')}` },
      retryAfterMs: null,
    });
    const withAudit = db.transaction((i: number) => record(result(i), { applied: true, specHash: 'b'.repeat(64), keyId: 'K2026A00001', actor: 'U2026A00001' }, previous));
    const empty = db.transaction((i: number) => void result(i));
    // warm both paths (statement compilation, JIT) before measuring
    for (let i = 0; i < 200; i++) {
      withAudit(i);
      empty(i);
    }
    const time = (fn: (i: number) => void): number => {
      const c0 = process.cpuUsage();
      for (let i = 0; i < n; i++) fn(1000 + i);
      const c = process.cpuUsage(c0);
      return c.user + c.system;
    };
    const audited = time(withAudit);
    const bare = time(empty);
    const entries = (db.prepare('SELECT count(*) AS n FROM audit_log').get() as { n: number }).n;
    return { perWriteUs: Math.max(0, Math.round(((audited - bare) / n) * 10) / 10), entries };
  } finally {
    db.close();
  }
}
