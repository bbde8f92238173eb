import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Batch, Row } from '../../types.ts';
import { ident, qualified } from '../connections.ts';
import { type ColumnKind, type Family, type RowScan, type Settled, compileRowScan, familyOf, fits, kindOf, settledFamily, settledKind, sqlType, widen } from './columns.ts';
import { type BatchEncoder, type RawColumn, compileBatchEncoder } from './copy-text.ts';
import { RawCells } from '../raw-cells.ts';

export type LoadMode = 'replace' | 'append' | 'merge';

export interface TableWriterOptions {
  /** A client inside an open transaction (BEGIN done); the writer never commits. */
  client: pg.Client;
  schema: string | undefined;
  table: string;
  mode: LoadMode;
  /** merge: the key fields. */
  primaryKey: string[];
  /** Fields whose values are a PostgreSQL source's COPY text (runs/engine/raw-cells.ts): name → type OID. */
  raw?: ReadonlyMap<string, number>;
}

export class SchemaMismatchError extends Error {}

type CopyStream = ReturnType<typeof copyFrom>;

interface Column {
  name: string;
  /** SQL data type as information_schema names it. */
  dataType: string;
  /** Created by this run: its type may still widen. */
  kind?: ColumnKind;
}

const MERGE_ORDER = '__bi_ord';
const COPY_BUFFER_BYTES = 4 * 1024 * 1024;

/**
 * Writes a stream of batches into one PostgreSQL table with COPY (text format), inside the
 * caller's transaction. A table that does not exist is created with the rows' fields as columns;
 * their types are inferred from the values and widen as later batches need (a column that starts
 * as integer and meets 1.5 becomes double precision). An existing table keeps its columns: a field
 * it lacks, or a value its column cannot hold, is a SchemaMismatchError naming the column.
 * `replace` truncates the table first, `append` adds, `merge` COPYs into a temporary table and
 * upserts on the primary key at `finish()` (later rows of the same key win; rows absent stay).
 */
export class PostgresTableWriter {
  readonly #o: TableWriterOptions;
  readonly #target: string;
  #created = false;
  #prepared = false;
  #columns: Column[] = [];
  #families = new Map<string, Family>();
  #copy: CopyStream | undefined;
  #copyError: Error | undefined;
  #copyTarget: string;
  #encode: BatchEncoder = () => Buffer.alloc(0);
  #scan: RowScan = compileRowScan([]);
  #copied = 0;
  readonly nonNull = new Map<string, number>();

  constructor(opts: TableWriterOptions) {
    this.#o = opts;
    this.#target = qualified(opts.schema, opts.table);
    this.#copyTarget = this.#target;
  }

  get label(): string {
    return `${this.#o.schema ? `${this.#o.schema}.` : ''}${this.#o.table}`;
  }

  /** Rows COPY reported written (merge: rows staged). */
  get rowsCopied(): number {
    return this.#copied;
  }

  /** Whether this run created the table. */
  get created(): boolean {
    return this.#created;
  }

  /** `column type` of each column, for the step message. */
  describeColumns(): string {
    return this.#columns.map((c) => `${c.name} ${c.kind ? sqlType(c.kind) : c.dataType}`).join(', ');
  }

  async write(batch: Batch): Promise<void> {
    // An empty batch (every row of it rejected upstream) prepares nothing: the first rows decide the table.
    if (batch.length === 0) return;
    if (!this.#prepared) await this.#prepare(batch);
    await this.#evolve(batch);
    const copy = await this.#stream();
    const counts = new Float64Array(this.#columns.length);
    const chunk = this.#encode(batch, counts);
    this.#columns.forEach((c, i) => this.nonNull.set(c.name, (this.nonNull.get(c.name) ?? 0) + (counts[i] as number)));
    if (!copy.write(chunk)) await Promise.race([once(copy, 'drain'), once(copy, 'error')]);
    if (this.#copyError) throw this.#copyError;
  }

  /** Ends the COPY, runs the merge; the transaction stays open. */
  async finish(): Promise<void> {
    if (!this.#prepared) await this.#prepare([]);
    await this.#endCopy();
    if (this.#o.mode === 'merge' && this.#columns.length > 0) await this.#merge();
  }

  /** Stops an unfinished COPY (the caller rolls the transaction back). */
  abort(): void {
    this.#copy?.destroy(new Error('load aborted'));
    this.#copy = undefined;
  }

  async columnsInDestination(): Promise<string[]> {
    const r = await this.#o.client.query<{ column_name: string }>(
      `SELECT a.attname AS column_name FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
      [this.#target],
    );
    return r.rows.map((x) => x.column_name);
  }

  async countRows(): Promise<number> {
    if (this.#columns.length === 0 && !(await this.#exists())) return 0;
    const r = await this.#o.client.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${this.#target}`);
    return Number(r.rows[0]?.n ?? 0);
  }

  async #exists(): Promise<boolean> {
    return (await this.#o.client.query<{ r: string | null }>('SELECT to_regclass($1)::text AS r', [this.#target])).rows[0]?.r != null;
  }

  async #prepare(first: Batch): Promise<void> {
    this.#prepared = true;
    const { client, schema, mode, primaryKey } = this.#o;
    const existing = await client.query<{ column_name: string; data_type: string }>(
      `SELECT a.attname AS column_name, format_type(a.atttypid, NULL) AS data_type
       FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
      [this.#target],
    );
    if (await this.#exists()) {
      this.#columns = existing.rows.map((r) => ({ name: r.column_name, dataType: r.data_type }));
      for (const c of this.#columns) this.#families.set(c.name, familyOf(c.dataType));
      const missingKey = primaryKey.find((k) => !this.#families.has(k));
      if (mode === 'merge' && missingKey) throw new SchemaMismatchError(`Schema mismatch on ${this.label}: primaryKey column ${missingKey} does not exist in the table`);
      if (mode === 'replace') await client.query(`TRUNCATE ${this.#target}`);
    } else {
      if (first.length === 0) return;
      if (schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
      this.#created = true;
      const fields = fieldsOf(first);
      for (const k of primaryKey) if (!fields.includes(k)) fields.push(k);
      this.#columns = fields.map((name) => ({ name, dataType: 'text', kind: 'unknown' }));
      for (const row of first) for (const c of this.#columns) c.kind = widen(c.kind as ColumnKind, this.#kindOf(c.name, row[c.name]));
      for (const c of this.#columns) c.dataType = sqlType(c.kind as ColumnKind);
      const key = mode === 'merge' && primaryKey.length > 0 ? `, PRIMARY KEY (${primaryKey.map(ident).join(', ')})` : '';
      await client.query(`CREATE TABLE ${this.#target} (${this.#columns.map((c) => `${ident(c.name)} ${c.dataType}`).join(', ')}${key})`);
    }
    if (mode === 'merge') {
      this.#copyTarget = ident(`_bi_merge_${process.pid}_${Date.now()}`);
      await client.query(`CREATE TEMP TABLE ${this.#copyTarget} (LIKE ${this.#target}) ON COMMIT DROP`);
      await client.query(`ALTER TABLE ${this.#copyTarget} ADD COLUMN ${MERGE_ORDER} bigserial`);
    }
    this.#compile();
  }

  /** Checks an existing table, or widens/extends a created one, before a batch is copied. */
  async #evolve(batch: Batch): Promise<void> {
    const cols = this.#columns;
    const names = cols.map((c) => c.name);
    const families = names.map((name) => this.#families.get(name) ?? 'text');
    const kinds = cols.map((c) => c.kind ?? 'unknown');
    let extra: Set<string> | undefined;
    const known = new Set(names);
    const rawOids = names.map((name) => this.#o.raw?.get(name));
    // Values that need no look: every value fits a text/json/other column, a created text column
    // cannot widen further, and the quick tests of load/columns.ts pass the values that keep a column as it is.
    const settledOf = (i: number): Settled => {
      const oid = rawOids[i];
      if (this.#created) return oid !== undefined ? RawCells.settledKind(oid, kinds[i] as ColumnKind) : settledKind(kinds[i] as ColumnKind);
      return oid !== undefined ? RawCells.settledFamily(oid, families[i] as Family) : settledFamily(families[i] as Family);
    };
    const settled = names.map((_, i) => settledOf(i));
    const look = (i: number, v: unknown): void => {
      const oid = rawOids[i];
      if (!this.#created) {
        if (!(oid !== undefined && typeof v === 'string' ? RawCells.fits(oid, v, families[i] as Family) : fits(v, families[i] as Family))) {
          const value = oid !== undefined && typeof v === 'string' ? RawCells.parse(oid, v) : v;
          throw new SchemaMismatchError(`Schema mismatch on ${this.label}: column ${names[i]} is ${cols[i]?.dataType}, value ${showValue(value)} does not fit`);
        }
        return;
      }
      const k = oid !== undefined && typeof v === 'string' ? RawCells.kindOf(oid, v, kinds[i]) : typeof v === 'string' ? 'text' : kindOf(v);
      if (k !== kinds[i]) {
        kinds[i] = widen(kinds[i] as ColumnKind, k);
        settled[i] = settledOf(i);
      }
    };
    const extraRow = (row: Row): void => {
      for (const k in row) {
        if (known.has(k) || row[k] === undefined) continue;
        if (!this.#created) throw new SchemaMismatchError(`Schema mismatch on ${this.label}: column ${k} does not exist in the table`);
        (extra ??= new Set()).add(k);
      }
    };
    this.#scan(batch, settled, look, extraRow);
    if (!this.#created) return;
    const added: Column[] = [];
    for (const name of extra ?? []) {
      let kind: ColumnKind = 'unknown';
      for (const row of batch) kind = widen(kind, this.#kindOf(name, row[name]));
      added.push({ name, dataType: sqlType(kind), kind });
    }
    const wider = cols.filter((c, i) => kinds[i] !== c.kind);
    if (added.length === 0 && wider.length === 0) return;
    await this.#endCopy();
    const tables = this.#copyTarget === this.#target ? [this.#target] : [this.#target, this.#copyTarget];
    for (const col of added) {
      for (const t of tables) await this.#o.client.query(`ALTER TABLE ${t} ADD COLUMN ${ident(col.name)} ${col.dataType}`);
      cols.push(col);
    }
    for (const col of wider) {
      col.kind = kinds[cols.indexOf(col)] as ColumnKind;
      col.dataType = sqlType(col.kind);
      for (const t of tables) await this.#o.client.query(`ALTER TABLE ${t} ALTER COLUMN ${ident(col.name)} TYPE ${col.dataType} USING ${ident(col.name)}::${col.dataType}`);
    }
    this.#compile();
  }

  /** The kind of a field's value, a raw cell's by its source type. */
  #kindOf(name: string, v: unknown): ColumnKind {
    const oid = this.#o.raw?.get(name);
    return oid !== undefined && typeof v === 'string' ? RawCells.kindOf(oid, v) : kindOf(v);
  }

  /**
   * The batch encoder and schema scan of the current columns. A field of raw cells is copied as
   * it is where its source type's text means the same in the column's type, else parsed first.
   */
  #compile(): void {
    const names = this.#columns.map((c) => c.name);
    const raw = this.#columns.map((c): RawColumn | undefined => {
      const oid = this.#o.raw?.get(c.name);
      if (oid === undefined) return undefined;
      return RawCells.passes(oid, c.dataType) ? 'pass' : (v: string) => RawCells.parse(oid, v);
    });
    this.#encode = compileBatchEncoder(names, this.#columns.map((c) => c.dataType), raw);
    this.#scan = compileRowScan(names);
  }

  async #stream(): Promise<CopyStream> {
    if (this.#copy) return this.#copy;
    const list = this.#columns.map((c) => ident(c.name)).join(', ');
    // A few MB of buffer: the next batch is encoded while PostgreSQL still reads the previous one.
    const copy = this.#o.client.query(copyFrom(`COPY ${this.#copyTarget} (${list}) FROM STDIN`, { highWaterMark: COPY_BUFFER_BYTES }));
    this.#copyError = undefined;
    copy.on('error', (err: Error) => {
      this.#copyError = err;
    });
    this.#copy = copy;
    return copy;
  }

  async #endCopy(): Promise<void> {
    const copy = this.#copy;
    if (!copy) return;
    this.#copy = undefined;
    if (this.#copyError) throw this.#copyError;
    copy.end();
    await finished(copy);
    this.#copied += copy.rowCount;
  }

  async #merge(): Promise<void> {
    const { client, primaryKey } = this.#o;
    const cols = this.#columns.map((c) => ident(c.name));
    const keys = primaryKey.map(ident);
    const last = ident(`_bi_merge_last_${process.pid}_${Date.now()}`);
    await client.query(
      `CREATE TEMP TABLE ${last} ON COMMIT DROP AS SELECT DISTINCT ON (${keys.join(', ')}) ${cols.join(', ')} FROM ${this.#copyTarget} ORDER BY ${keys.join(', ')}, ${MERGE_ORDER} DESC`,
    );
    const match = keys.map((k) => `t.${k} = s.${k}`).join(' AND ');
    const updates = cols.filter((c) => !keys.includes(c)).map((c) => `${c} = s.${c}`);
    if (updates.length > 0) await client.query(`UPDATE ${this.#target} t SET ${updates.join(', ')} FROM ${last} s WHERE ${match}`);
    await client.query(
      `INSERT INTO ${this.#target} (${cols.join(', ')}) SELECT ${cols.map((c) => `s.${c}`).join(', ')} FROM ${last} s WHERE NOT EXISTS (SELECT 1 FROM ${this.#target} t WHERE ${match})`,
    );
  }
}

const showValue = (v: unknown): string => JSON.stringify(v instanceof Date ? v.toISOString() : typeof v === 'bigint' ? v.toString() : v);

/** Field names of a batch in first-seen order. */
export function fieldsOf(batch: Row[]): string[] {
  const seen = new Set<string>();
  for (const row of batch) for (const k in row) seen.add(k);
  return [...seen];
}
