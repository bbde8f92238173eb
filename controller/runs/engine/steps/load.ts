import type { Batch, ResolvedConnection } from '../../types.ts';
import { connectPostgres } from '../connections.ts';
import { type LoadMode, PostgresTableWriter } from '../load/postgres.ts';
import { type RunScope, StepConfigError, type StepContext, type StepRunner, configString, isNullish, requireString, show } from '../step.ts';

function primaryKeyOf(config: Record<string, unknown>): string[] {
  const pk = config.primaryKey;
  if (typeof pk === 'string') return pk.split(',').map((s) => s.trim()).filter(Boolean);
  if (Array.isArray(pk) && pk.every((k) => typeof k === 'string')) return pk as string[];
  if (pk === undefined) return [];
  throw new StepConfigError('config.primaryKey must be a field name or a list of field names');
}

function modeOf(config: Record<string, unknown>): LoadMode {
  const mode = config.mode ?? 'replace';
  if (mode !== 'replace' && mode !== 'append' && mode !== 'merge') throw new StepConfigError(`config.mode ${show(mode)} must be replace, append or merge`);
  return mode;
}

/**
 * Writes the rows that reach it into a PostgreSQL table in one transaction that is committed only
 * when the whole run succeeded (the engine commits every pending write at the very end).
 * `load` passes its rows on (a reconcile after it sees them); `stage` is the same write in
 * `replace` mode into the staging table.
 */
export class TableWriteStep implements StepRunner {
  readonly #scope: RunScope;
  readonly #config: Record<string, unknown>;
  readonly #kind: 'load' | 'stage';
  readonly #mode: LoadMode;
  readonly #primaryKey: string[];
  readonly #table: string;
  #writer: PostgresTableWriter | undefined;

  constructor(kind: 'load' | 'stage', config: Record<string, unknown>, scope: RunScope) {
    this.#kind = kind;
    this.#config = config;
    this.#scope = scope;
    this.#table = requireString(config, 'tableName', kind);
    this.#mode = kind === 'stage' ? 'replace' : modeOf(config);
    this.#primaryKey = kind === 'stage' ? [] : primaryKeyOf(config);
    if (this.#mode === 'merge' && this.#primaryKey.length === 0) throw new StepConfigError('merge mode needs config.primaryKey (a field name or a list)');
  }

  message(): string | null {
    const w = this.#writer;
    if (!w) return null;
    const columns = w.describeColumns();
    return `${this.#mode} ${w.label}${w.created ? ' (created)' : ''}${columns ? `: ${columns}` : ''}`;
  }

  async *run(input: AsyncIterable<Batch>, ctx: StepContext): AsyncIterable<Batch> {
    const connectionId = requireString(this.#config, 'connectionId', this.#kind);
    const conn: ResolvedConnection = this.#scope.connections.resolve(connectionId);
    if (conn.vendor !== 'POSTGRESQL') throw new Error(`${this.#kind} writes to PostgreSQL only; connection ${connectionId} is ${conn.vendor}`);
    const reach = this.#scope.reach;
    const schema = reach.schemaFor(conn, configString(this.#config, 'schemaName'), 'config.schemaName');
    const client = await connectPostgres(conn, this.#scope.egress, `${this.#kind} ${this.#scope.runId}`, reach.pinnedSchema(conn));
    let committed = false;
    const release = async (sql: 'COMMIT' | 'ROLLBACK'): Promise<void> => {
      if (committed) return;
      committed = true;
      try {
        if (sql === 'ROLLBACK') this.#writer?.abort();
        await client.query(sql);
      } finally {
        await client.end().catch(() => {});
      }
    };
    // Registered before BEGIN so a failure anywhere after connecting still rolls back and closes.
    this.#scope.pending.push({ commit: () => release('COMMIT'), rollback: () => release('ROLLBACK').catch(() => {}) });
    await client.query('BEGIN');
    const writer = new PostgresTableWriter({ client, schema, table: this.#table, mode: this.#mode, primaryKey: this.#primaryKey, raw: this.#scope.rawCells.columns });
    this.#writer = writer;
    let written = 0;
    for await (const batch of input) {
      let rows = batch;
      if (this.#mode === 'merge') {
        rows = [];
        for (const row of batch) {
          const missing = this.#primaryKey.filter((k) => isNullish(row[k]));
          if (missing.length > 0) ctx.reject(row, [`merge: primaryKey ${missing.join(', ')} is null`]);
          else rows.push(row);
        }
      }
      await writer.write(rows);
      written += rows.length;
      yield rows;
    }
    await writer.finish();
    if (writer.created) ctx.log('info', `created ${writer.label} (${writer.describeColumns()})`);
    else if (written === 0 && writer.describeColumns() === '') ctx.log('warn', `no rows: ${writer.label} does not exist and was not created`);
    if (this.#kind === 'load') {
      this.#scope.loads.push({
        stepId: ctx.step.id,
        target: writer.label,
        rowsWritten: written,
        countRowsInDestination: async () => (this.#mode === 'replace' ? writer.countRows() : writer.rowsCopied),
        destinationColumns: () => writer.columnsInDestination(),
        nonNull: writer.nonNull,
      });
    }
  }
}
