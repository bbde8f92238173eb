import type { Store } from '../../store/db.ts';
import { RE2JS } from 're2js';
import { ValidationError } from '../../errors.ts';
import { CLIENT_COLUMNS, listView, type ClientRow, type ListedClient } from './registry.ts';
import type { RegistrySearch } from './search.ts';
import type { ClientStatus } from './types.ts';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;
export const MAX_SEARCH_LENGTH = 256;

export interface ListQuery {
  page: number;
  limit: number;
  status?: ClientStatus;
  /** Compiled case-insensitive pattern (RE2: linear time, no catastrophic backtracking). */
  search?: RE2JS;
  /** Another order than the listing's (newest onboarding first): a column and a direction. */
  sort?: { field: SortField; dir: 'asc' | 'desc' };
}

/** The registry's sortable columns (`?sort=`) and their SQL. */
export const SORT_FIELDS = { clientId: 'client_id', clientName: 'client_name COLLATE NOCASE', status: 'status', onboardedDate: 'onboarded_date' } as const;
export type SortField = keyof typeof SORT_FIELDS;

/** ORDER BY of a query: its sort, ties by clientId (stable pages), or the listing order. */
function orderOf(q: ListQuery): string {
  if (!q.sort) return ORDER;
  const dir = q.sort.dir === 'desc' ? 'DESC' : 'ASC';
  return `ORDER BY ${SORT_FIELDS[q.sort.field]} ${dir}, client_id ${dir}`;
}

export interface ListPage {
  data: ListedClient[];
  pagination: { page: number; limit: number; total: number; totalPages: number };
}

/** The listing's query string as the edge checked it (api/schemas/clients.ts): typed, defaults in, status uppercased. */
export interface ListQueryString {
  page: number;
  limit: number;
  status?: string;
  search?: string;
  sort?: string;
  order?: string;
}

/**
 * What the schema cannot say about a checked query of `GET /v1/bi/admin/clients/{userId}`: the
 * search compiled (400 when it is not a valid RE2 pattern), and the sort's direction (desc by
 * default for onboardedDate, whose own descending order keeps the listing's index walk).
 */
export function readListQuery(q: ListQueryString): ListQuery {
  let search: RE2JS | undefined;
  if (q.search) {
    try {
      search = RE2JS.compile(q.search, RE2JS.CASE_INSENSITIVE);
    } catch (err) {
      throw new ValidationError([{ path: 'search', message: `search is not a valid regular expression: ${(err as Error).message}` }]);
    }
  }
  let sort: ListQuery['sort'];
  if (q.sort) {
    const field = q.sort as SortField;
    const dir = q.order === 'desc' || (q.order !== 'asc' && field === 'onboardedDate') ? 'desc' : 'asc';
    // The listing's own order keeps its index walk.
    if (!(field === 'onboardedDate' && dir === 'desc')) sort = { field, dir };
  }
  return { page: q.page, limit: q.limit, status: q.status as ClientStatus | undefined, search, ...(sort ? { sort } : {}) };
}

const ORDER = 'ORDER BY onboarded_date DESC, client_id';
const REVERSE_ORDER = 'ORDER BY onboarded_date ASC, client_id DESC';

/**
 * One page of the registry, newest onboarding first (ties by clientId, so pages are stable).
 * Without a search the page is a LIMIT/OFFSET walk of the listing index; with one, the
 * pattern runs over (clientId, clientName) of each candidate row and only the page's rows
 * are read whole.
 */
export async function listClients(db: Store, q: ListQuery, search: RegistrySearch, only?: readonly string[]): Promise<ListPage> {
  const offset = (q.page - 1) * q.limit;
  const { total, rows } = only ? grantedPage(db, q, only, offset) : q.search ? await searchPage(db, q, q.search, offset, search) : plainPage(db, q, offset);
  return {
    data: rows.map(listView),
    pagination: { page: q.page, limit: q.limit, total, totalPages: Math.ceil(total / q.limit) },
  };
}

/** A member's listing: only the (few) clients granted to them, filtered and paged in memory. */
function grantedPage(db: Store, q: ListQuery, ids: readonly string[], offset: number): { total: number; rows: ClientRow[] } {
  const all = (db.statements.prepare(`SELECT ${CLIENT_COLUMNS} FROM clients WHERE client_id IN (SELECT value FROM json_each(?)) ${orderOf(q)}`).all(JSON.stringify(ids)) as ClientRow[]).filter(
    (r) => (!q.status || r.status === q.status) && (!q.search || q.search.test(r.client_id) || q.search.test(r.client_name)),
  );
  return { total: all.length, rows: all.slice(offset, offset + q.limit) };
}

/**
 * No search: the total comes from the trigger-kept counts, and the page's rowids from a walk of
 * the covering listing index (skipped rows are never read whole), then only those rows.
 */
function plainPage(db: Store, q: ListQuery, offset: number): { total: number; rows: ClientRow[] } {
  const counted = q.status
    ? (db.statements.prepare('SELECT n FROM client_status_counts WHERE status = ?').get(q.status) as { n: number } | undefined)
    : (db.statements.prepare('SELECT COALESCE(SUM(n), 0) AS n FROM client_status_counts').get() as { n: number });
  const total = counted?.n ?? 0;
  if (offset >= total) return { total, rows: [] };
  if (q.sort) {
    // Another order than the listing index's: SQLite sorts (the client_id order walks its key).
    const rows = db
      .statements.prepare(`SELECT ${CLIENT_COLUMNS} FROM clients ${q.status ? 'WHERE status = @status' : ''} ${orderOf(q)} LIMIT @limit OFFSET @offset`)
      .all({ ...(q.status ? { status: q.status } : {}), limit: q.limit, offset }) as ClientRow[];
    return { total, rows };
  }
  // A page in the back half is walked from the end of the index: no walk is longer than half.
  const fromEnd = offset + q.limit / 2 > total / 2;
  const limit = Math.min(q.limit, total - offset);
  const rows = db
    .statements.prepare(`SELECT ${CLIENT_COLUMNS} FROM clients WHERE rowid IN (${pageRowidsSql(q.status !== undefined, fromEnd)}) ${ORDER}`)
    .all({ status: q.status ?? null, limit, offset: fromEnd ? total - offset - limit : offset }) as ClientRow[];
  return { total, rows };
}

/** The rowids of one page: a walk of a covering index (listing or status), never of whole rows. */
export function pageRowidsSql(byStatus: boolean, fromEnd: boolean): string {
  return `SELECT rowid FROM clients ${byStatus ? 'WHERE status = @status' : ''} ${fromEnd ? REVERSE_ORDER : ORDER} LIMIT @limit OFFSET @offset`;
}

/**
 * Search: the pattern runs in a worker thread over a copy of (clientId, clientName) kept in
 * listing order, time-bounded (search.ts); the page is a slice of the matches, and only its rows are
 * read whole.
 */
async function searchPage(db: Store, q: ListQuery, re: RE2JS, offset: number, search: RegistrySearch): Promise<{ total: number; rows: ClientRow[] }> {
  const matched = await search.match(re, q.status);
  const total = matched.length;
  if (offset >= total) return { total, rows: [] };
  if (q.sort) {
    const rows = db
      .statements.prepare(`SELECT ${CLIENT_COLUMNS} FROM clients WHERE rowid IN (SELECT value FROM json_each(?)) ${orderOf(q)} LIMIT ? OFFSET ?`)
      .all(JSON.stringify(matched), q.limit, offset) as ClientRow[];
    return { total, rows };
  }
  const rows = db
    .statements.prepare(`SELECT ${CLIENT_COLUMNS} FROM clients WHERE rowid IN (SELECT value FROM json_each(?)) ${ORDER}`)
    .all(JSON.stringify(matched.slice(offset, offset + q.limit))) as ClientRow[];
  return { total, rows };
}
