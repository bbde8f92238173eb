import type pg from 'pg';
import type { Batch, Row } from '../../types.ts';
import { connectPostgres, ident, qualified } from '../connections.ts';
import { type RunScope, type StepContext, type StepRunner, configString, isNullish, requireString } from '../step.ts';

/** A key as the lookup compares it: text (what a `= ANY($1::text[])` cast would compare). */
const keyText = (v: unknown): string => (v instanceof Date ? v.toISOString() : typeof v === 'object' ? JSON.stringify(v) : String(v));

/**
 * db_lookup: a left join of each row with `tableName` on `row[lookupKey] = joinField`, one query per
 * batch for the batch's distinct keys. Adds the `selectFields` columns (all columns but
 * `joinField` when absent); no match (or a null key) gives nulls. When several lookup rows share
 * a key, the first PostgreSQL returns is used; an added column replaces a row field of that name.
 */
export class DbLookupStep implements StepRunner {
  readonly #config: Record<string, unknown>;
  readonly #scope: RunScope;

  constructor(config: Record<string, unknown>, scope: RunScope) {
    this.#config = config;
    this.#scope = scope;
    for (const key of ['connectionId', 'tableName', 'lookupKey', 'joinField']) requireString(config, key, 'db_lookup');
  }

  async *run(input: AsyncIterable<Batch>, _ctx: StepContext): AsyncIterable<Batch> {
    const c = this.#config;
    const reach = this.#scope.reach;
    const conn = this.#scope.connections.resolve(requireString(c, 'connectionId', 'db_lookup'));
    const schema = reach.schemaFor(conn, configString(c, 'schemaName'), 'config.schemaName');
    const client = await connectPostgres(conn, this.#scope.egress, `lookup ${this.#scope.runId}`, reach.pinnedSchema(conn));
    try {
      const table = qualified(schema, requireString(c, 'tableName', 'db_lookup'));
      const lookupKey = requireString(c, 'lookupKey', 'db_lookup');
      const joinField = requireString(c, 'joinField', 'db_lookup');
      const columns = await this.#columns(client, table);
      if (!columns.all.includes(joinField)) throw new Error(`db_lookup: column ${joinField} does not exist in ${table}`);
      const listed = configString(c, 'selectFields')?.split(',').map((s) => s.trim()).filter(Boolean);
      const select = listed ?? columns.all.filter((col) => col !== joinField);
      const unknown = select.filter((s) => !columns.all.includes(s));
      if (unknown.length > 0) throw new Error(`db_lookup: selectFields ${unknown.join(', ')} not in ${table}`);
      const head = `SELECT ${[joinField, ...select].map(ident).join(', ')} FROM ${table} WHERE `;
      // Typed comparison uses the lookup table's index; a key the column type cannot read falls back to text.
      const typed = `${head}${ident(joinField)} = ANY($1::${columns.types.get(joinField)}[])`;
      const text = `${head}${ident(joinField)}::text = ANY($1::text[])`;
      const nulls: Row = Object.fromEntries(select.map((s) => [s, null]));
      for await (const batch of input) {
        const keys = [...new Set(batch.map((r) => r[lookupKey]).filter((v) => !isNullish(v)).map(keyText))];
        const found = new Map<string, Row>();
        if (keys.length > 0) {
          const res = await client.query<Row>(typed, [keys]).catch((err: { code?: string }) => {
            if (err.code === '22P02' || err.code === '22007' || err.code === '22008' || err.code === '22003') return client.query<Row>(text, [keys]);
            throw err;
          });
          for (const row of res.rows) {
            const k = keyText(row[joinField]);
            if (found.has(k)) continue;
            const added: Row = {};
            for (const s of select) added[s] = row[s];
            found.set(k, added);
          }
        }
        yield batch.map((row) => {
          const v = row[lookupKey];
          return { ...row, ...(isNullish(v) ? nulls : (found.get(keyText(v)) ?? nulls)) };
        });
      }
    } finally {
      await client.end().catch(() => {});
    }
  }

  async #columns(client: pg.Client, table: string): Promise<{ all: string[]; types: Map<string, string> }> {
    const exists = await client.query<{ r: string | null }>('SELECT to_regclass($1)::text AS r', [table]);
    if (exists.rows[0]?.r == null) throw new Error(`db_lookup: table ${table} does not exist`);
    const r = await client.query<{ name: string; type: string }>(
      'SELECT attname AS name, format_type(atttypid, NULL) AS type FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped ORDER BY attnum',
      [table],
    );
    return { all: r.rows.map((x) => x.name), types: new Map(r.rows.map((x) => [x.name, x.type])) };
  }
}
