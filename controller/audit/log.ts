import type { Database } from 'better-sqlite3';
import { sha256 } from '../hash.ts';
import type { ApiAuditEntry } from '../generated/schema-types.ts';
import { canonicalJson } from './canonical.ts';
import type { Store } from '../store/db.ts';

const isStore = (db: Database): db is Store => 'statements' in db;

/** One entry of the audit log (schemas/api.schema.json `AuditEntry`). */
export type AuditEntry = ApiAuditEntry;
export type AuditActor = AuditEntry['actor'];
export type AuditResult = AuditEntry['result'];

/** What a caller appends: the log adds `seq`, `at` (unless given), `prevHash` and `hash`. */
export type AuditInput = Omit<AuditEntry, 'seq' | 'at' | 'hash' | 'prevHash'> & { at?: string };

/**
 * The actor of an entry from what the store records as "who": a user ID (an API write or
 * session), a git author's email (with the revision), `controller` otherwise.
 */
export function actorOf(who: string | null | undefined, revision?: string | null): AuditActor {
  if (who && /^U\d{4}A\d{5}$/.test(who)) return { type: 'user', id: who };
  if (who?.startsWith('cli:')) return { type: 'cli', id: who.slice('cli:'.length) };
  if (who && who.includes('@')) return { type: 'git', id: who, ...(revision ? { revision } : {}) };
  return { type: 'controller', id: who || 'controller' };
}

/** `prevHash` of the first entry. */
export const GENESIS_HASH = '0'.repeat(64);

interface AuditRow {
  seq: number;
  at: string;
  actor_type: AuditActor['type'];
  actor_id: string;
  actor_revision: string | null;
  action: string;
  client_id: string | null;
  object_kind: string | null;
  object_id: string | null;
  before: string | null;
  after: string | null;
  result: AuditResult;
  request_id: string | null;
  hash: string;
  prev_hash: string;
}

const COLUMNS = 'seq, at, actor_type, actor_id, actor_revision, action, client_id, object_kind, object_id, before, after, result, request_id, hash, prev_hash';
/** The actor types of an entry; an `actor` filter that is none of them is an actor ID. */
const ACTOR_TYPES: ReadonlySet<string> = new Set<AuditActor['type']>(['user', 'key', 'git', 'controller', 'cli']);

/** `hash = sha256hex(prevHash + canonical(entry without hash))`. */
export function entryHash(entry: Omit<AuditEntry, 'hash'>): string {
  return sha256(entry.prevHash + canonicalJson(entry));
}

function entryOf(r: AuditRow): AuditEntry {
  return {
    seq: r.seq,
    at: r.at,
    actor: { type: r.actor_type, id: r.actor_id, ...(r.actor_revision !== null ? { revision: r.actor_revision } : {}) },
    action: r.action,
    ...(r.client_id !== null ? { clientId: r.client_id } : {}),
    ...(r.object_kind !== null && r.object_id !== null ? { object: { kind: r.object_kind, id: r.object_id } } : {}),
    ...(r.before !== null ? { before: r.before } : {}),
    ...(r.after !== null ? { after: r.after } : {}),
    result: r.result,
    ...(r.request_id !== null ? { requestId: r.request_id } : {}),
    hash: r.hash,
    prevHash: r.prev_hash,
  };
}

/**
 * Appends one entry to the hash-chained log, in the caller's transaction when there is one (an
 * apply and its entry commit together), else in an immediate one of its own (another process
 * appending at once waits for the lock instead of taking the same `seq`).
 */
export function appendAudit(db: Database, input: AuditInput, now: () => Date = () => new Date()): AuditEntry {
  // The store's compiled statements when it has them: every API write appends an entry.
  const prepare = (sql: string) => (isStore(db) ? db.statements.prepare(sql) : db.prepare(sql));
  const write = (): AuditEntry => {
    const last = prepare('SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1').get() as { seq: number; hash: string } | undefined;
    const checkpoint = last ? undefined : (prepare('SELECT seq, prev_hash FROM audit_checkpoint WHERE id = 1').get() as { seq: number; prev_hash: string } | undefined);
    const { at, ...rest } = input;
    const body: Omit<AuditEntry, 'hash'> = {
      ...rest,
      seq: last ? last.seq + 1 : (checkpoint?.seq ?? 1),
      at: at ?? now().toISOString(),
      prevHash: last?.hash ?? checkpoint?.prev_hash ?? GENESIS_HASH,
    };
    const entry: AuditEntry = { ...body, hash: entryHash(body) };
    prepare(
      `INSERT INTO audit_log (${COLUMNS}) VALUES (@seq, @at, @actor_type, @actor_id, @actor_revision, @action, @client_id, @object_kind, @object_id,
       @before, @after, @result, @request_id, @hash, @prev_hash)`,
    ).run({
      seq: entry.seq,
      at: entry.at,
      actor_type: entry.actor.type,
      actor_id: entry.actor.id,
      actor_revision: entry.actor.revision ?? null,
      action: entry.action,
      client_id: entry.clientId ?? null,
      object_kind: entry.object?.kind ?? null,
      object_id: entry.object?.id ?? null,
      before: entry.before ?? null,
      after: entry.after ?? null,
      result: entry.result,
      request_id: entry.requestId ?? null,
      hash: entry.hash,
      prev_hash: entry.prevHash,
    });
    return entry;
  };
  return db.inTransaction ? write() : db.transaction(write).immediate();
}

/** The result of walking the chain: ok, or the first entry that does not hold. */
export type VerifyResult = { ok: true; entries: number } | { ok: false; brokenAt: number; entries: number };

/**
 * Walks the chain from its start (seq 1 with 64 zeros, or the checkpoint an age-based prune
 * left): every entry's `seq` follows the last, its `prevHash` is the last one's `hash`, and its
 * `hash` is what its own fields give.
 */
export function verifyAudit(db: Database): VerifyResult {
  const checkpoint = db.prepare('SELECT seq, prev_hash FROM audit_checkpoint WHERE id = 1').get() as { seq: number; prev_hash: string } | undefined;
  let expectSeq = checkpoint?.seq ?? 1;
  let expectPrev = checkpoint?.prev_hash ?? GENESIS_HASH;
  let n = 0;
  for (const row of db.prepare(`SELECT ${COLUMNS} FROM audit_log ORDER BY seq`).iterate() as IterableIterator<AuditRow>) {
    n++;
    const entry = entryOf(row);
    const { hash, ...body } = entry;
    if (row.seq !== expectSeq || row.prev_hash !== expectPrev || entryHash(body) !== hash) return { ok: false, brokenAt: expectSeq === row.seq ? row.seq : expectSeq, entries: n };
    expectSeq = row.seq + 1;
    expectPrev = row.hash;
  }
  return { ok: true, entries: n };
}

export interface AuditQuery {
  /** Only entries of these clients ('all': every entry, also those of no client). */
  clients: 'all' | readonly string[];
  clientId?: string;
  /** `type`, `type:id` (e.g. `user:U2026A00001`), or a bare actor ID of any type. */
  actor?: string;
  action?: string;
  /** Only entries about this object (kind and ID, e.g. Pipeline / orders). */
  object?: { kind: string; id: string };
  since?: string;
  until?: string;
  cursor?: number;
  limit: number;
  order: 'asc' | 'desc';
}

/** A page of entries and the cursor of the next one (the last entry's seq), or null when there is none. */
export function readAudit(db: Database, q: AuditQuery): { entries: AuditEntry[]; nextCursor: number | null } {
  const { where, args } = auditWhere(q);
  const rows = db
    .prepare(`SELECT ${COLUMNS} FROM audit_log ${where} ORDER BY seq ${q.order === 'asc' ? 'ASC' : 'DESC'} LIMIT @limit`)
    .all({ ...args, limit: q.limit + 1 }) as AuditRow[];
  const more = rows.length > q.limit;
  const page = rows.slice(0, q.limit).map(entryOf);
  return { entries: page, nextCursor: more ? (page.at(-1)?.seq ?? null) : null };
}

/** Every matching entry, oldest first, one at a time (the NDJSON export). */
export function* iterateAudit(db: Database, q: Omit<AuditQuery, 'limit' | 'cursor' | 'order'>): Generator<AuditEntry> {
  const { where, args } = auditWhere({ ...q, order: 'asc' });
  for (const row of db.prepare(`SELECT ${COLUMNS} FROM audit_log ${where} ORDER BY seq ASC`).iterate(args) as IterableIterator<AuditRow>) yield entryOf(row);
}

function auditWhere(q: Omit<AuditQuery, 'limit'> & { cursor?: number }): { where: string; args: Record<string, unknown> } {
  const clauses: string[] = [];
  const args: Record<string, unknown> = {};
  if (q.clients !== 'all') {
    clauses.push('client_id IN (SELECT value FROM json_each(@clients))');
    args.clients = JSON.stringify(q.clients);
  }
  if (q.clientId !== undefined) {
    clauses.push('client_id = @clientId');
    args.clientId = q.clientId;
  }
  if (q.actor !== undefined) {
    const i = q.actor.indexOf(':');
    if (i < 0 && !ACTOR_TYPES.has(q.actor)) {
      clauses.push('actor_id = @actorId');
      args.actorId = q.actor;
    } else {
      clauses.push(i < 0 ? 'actor_type = @actorType' : 'actor_type = @actorType AND actor_id = @actorId');
      args.actorType = i < 0 ? q.actor : q.actor.slice(0, i);
      if (i >= 0) args.actorId = q.actor.slice(i + 1);
    }
  }
  if (q.action !== undefined) {
    clauses.push('action = @action');
    args.action = q.action;
  }
  if (q.object !== undefined) {
    clauses.push('object_kind = @objectKind AND object_id = @objectId');
    args.objectKind = q.object.kind;
    args.objectId = q.object.id;
  }
  if (q.since !== undefined) {
    clauses.push('at >= @since');
    args.since = q.since;
  }
  if (q.until !== undefined) {
    clauses.push('at < @until');
    args.until = q.until;
  }
  if (q.cursor !== undefined) {
    clauses.push(q.order === 'asc' ? 'seq > @cursor' : 'seq < @cursor');
    args.cursor = q.cursor;
  }
  return { where: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', args };
}

/**
 * BI_AUDIT_RETENTION: entries older than `before` are deleted, never the newest one, and the
 * first kept entry's seq and prevHash become the checkpoint the chain is verified from.
 * Returns how many entries went.
 */
export function pruneAudit(db: Database, before: string, now: () => Date = () => new Date()): number {
  return db.transaction(() => {
    const last = db.prepare('SELECT MAX(seq) AS seq FROM audit_log').get() as { seq: number | null };
    if (last.seq === null) return 0;
    const firstKept = db.prepare('SELECT seq, prev_hash FROM audit_log WHERE at >= ? OR seq = ? ORDER BY seq LIMIT 1').get(before, last.seq) as {
      seq: number;
      prev_hash: string;
    };
    db.prepare("UPDATE counters SET value = 1 WHERE name = 'audit.prune_gate'").run();
    const removed = db.prepare('DELETE FROM audit_log WHERE seq < ?').run(firstKept.seq).changes;
    db.prepare("UPDATE counters SET value = 0 WHERE name = 'audit.prune_gate'").run();
    if (removed > 0) {
      db
        .prepare('INSERT INTO audit_checkpoint (id, seq, prev_hash, pruned_at) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, prev_hash = excluded.prev_hash, pruned_at = excluded.pruned_at')
        .run(firstKept.seq, firstKept.prev_hash, now().toISOString());
    }
    return removed;
  }).immediate();
}
