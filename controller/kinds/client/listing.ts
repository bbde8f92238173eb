import type { Database } from 'better-sqlite3';
import { RE2JS } from 're2js';
import { ValidationError } from '../../errors.ts';
import type { Problem } from '../../types.ts';
import { CLIENT_COLUMNS, listView, type ClientRow, type ListedClient } from './registry.ts';
import { CLIENT_STATUSES, type ClientStatus } from './types.ts';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;
export const MAX_SEARCH_LENGTH = 256;

export interface ListQuery {
  page: number;
  limit: number;
  status?: ClientStatus;
  /** Compiled case-insensitive pattern (RE2: linear time, no catastrophic backtracking). */
  search?: RE2JS;
}

export interface ListPage {
  data: ListedClient[];
  pagination: { page: number; limit: number; total: number; totalPages: number };
}

function positiveInt(raw: unknown, field: string, max: number, problems: Problem[]): number | undefined {
  if (raw === undefined) return undefined;
  const s = String(raw);
  const n = /^\d{1,9}$/.test(s) ? Number(s) : NaN;
  if (!(n >= 1 && n <= max)) {
    const range = max === Number.MAX_SAFE_INTEGER ? 'a positive integer' : `an integer from 1 to ${max}`;
    problems.push({ path: field, message: `${field} must be ${range}` });
    return undefined;
  }
  return n;
}

/** Query string of `GET /v1/bi/admin/clients/{userId}` → a checked query; every bad value is named. */
export function parseListQuery(q: Record<string, unknown>): ListQuery {
  const problems: Problem[] = [];
  const one = (field: string): unknown => {
    const v = q[field];
    if (Array.isArray(v)) {
      problems.push({ path: field, message: `${field} must be given once` });
      return undefined;
    }
    return v;
  };
  const page = positiveInt(one('page'), 'page', Number.MAX_SAFE_INTEGER, problems) ?? 1;
  const limit = positiveInt(one('limit'), 'limit', MAX_PAGE_SIZE, problems) ?? DEFAULT_PAGE_SIZE;
  const rawStatus = one('status');
  let status: ClientStatus | undefined;
  if (rawStatus !== undefined && rawStatus !== '') {
    const s = String(rawStatus).toUpperCase();
    if ((CLIENT_STATUSES as readonly string[]).includes(s)) status = s as ClientStatus;
    else problems.push({ path: 'status', message: `status must be one of ${CLIENT_STATUSES.join(', ')}` });
  }
  const rawSearch = one('search');
  let search: RE2JS | undefined;
  if (rawSearch !== undefined && rawSearch !== '') {
    const pattern = String(rawSearch);
    if (pattern.length > MAX_SEARCH_LENGTH) {
      problems.push({ path: 'search', message: `search must be at most ${MAX_SEARCH_LENGTH} characters` });
    } else {
      try {
        search = RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);
      } catch (err) {
        problems.push({ path: 'search', message: `search is not a valid regular expression: ${(err as Error).message}` });
      }
    }
  }
  if (problems.length) throw new ValidationError(problems);
  return { page, limit, status, search };
}

const ORDER = 'ORDER BY onboarded_date DESC, client_id';

/**
 * One page of the registry, newest onboarding first (ties by clientId, so pages are stable).
 * Without a search the page is a LIMIT/OFFSET walk of the listing index; with one, the
 * pattern runs over (clientId, clientName) of each candidate row and only the page's rows
 * are read whole.
 */
export function listClients(db: Database, q: ListQuery): ListPage {
  const where = q.status ? 'WHERE status = @status' : '';
  const params = { status: q.status ?? null, limit: q.limit, offset: (q.page - 1) * q.limit };
  let total: number;
  let rows: ClientRow[];
  if (!q.search) {
    total = (db.prepare(`SELECT COUNT(*) AS n FROM clients ${where}`).get(params) as { n: number }).n;
    rows =
      params.offset >= total
        ? []
        : (db.prepare(`SELECT ${CLIENT_COLUMNS} FROM clients ${where} ${ORDER} LIMIT @limit OFFSET @offset`).all(params) as ClientRow[]);
  } else {
    const re = q.search;
    const ids: string[] = [];
    const candidates = db.prepare(`SELECT client_id, client_name FROM clients ${where} ${ORDER}`).raw().iterate(params) as IterableIterator<[string, string]>;
    for (const [id, name] of candidates) if (re.test(id) || re.test(name)) ids.push(id);
    total = ids.length;
    const pageIds = ids.slice(params.offset, params.offset + q.limit);
    rows = pageIds.length ? readRows(db, pageIds) : [];
  }
  return {
    data: rows.map(listView),
    pagination: { page: q.page, limit: q.limit, total, totalPages: Math.ceil(total / q.limit) },
  };
}

/** Rows for these clientIds, in the given order. */
function readRows(db: Database, ids: string[]): ClientRow[] {
  const found = db
    .prepare(`SELECT ${CLIENT_COLUMNS} FROM clients WHERE client_id IN (SELECT value FROM json_each(?))`)
    .all(JSON.stringify(ids)) as ClientRow[];
  const byId = new Map(found.map((r) => [r.client_id, r]));
  return ids.map((id) => byId.get(id)).filter((r): r is ClientRow => r !== undefined);
}
