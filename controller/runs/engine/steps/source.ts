import type { SourceType } from '../../../kinds/pipeline/types.ts';
import type { Batch, ResolvedConnection } from '../../types.ts';
import { API_DEFAULTS, type Sleep, apiRows } from '../sources/api.ts';
import { postgresTableRows } from '../sources/database.ts';
import { formatOf, openInside, parseRows } from '../sources/files.ts';
import { s3Rows } from '../sources/s3.ts';
import { snowflakeTableRows } from '../sources/snowflake.ts';
import type { RunReach } from '../../reach.ts';
import { type RunScope, StepConfigError, type StepContext, type StepRunner, configString, isObject, requireString, sourceTypes } from '../step.ts';

export interface ApiTuning {
  maxRetries?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  timeoutMs?: number;
  sleep: Sleep;
}

/**
 * The Authorization header an API connection carries to `url`: Basic with a username, Bearer with
 * a password alone — only where the run's reach lets the credential go (its own origin), else the
 * step fails naming the endpoint.
 */
function authHeaders(conn: ResolvedConnection, url: URL, reach: RunReach): Record<string, string> {
  if (!conn.password) return {};
  const refused = reach.credentialRefusal(conn, url);
  if (refused) throw new StepConfigError(`config.endpoint ${refused}`);
  if (conn.username) return { authorization: `Basic ${Buffer.from(`${conn.username}:${conn.password}`).toString('base64')}` };
  return { authorization: `Bearer ${conn.password}` };
}

/**
 * source: the rows it reads are appended to the stream at its position — the generated source
 * step starts the stream; an explicit source step passes on the rows it receives first, then its
 * own (the steps before it never see them). Every source step reads the pipeline's `source.type`
 * (an explicit step may name another with `config.type`).
 */
export class SourceStep implements StepRunner {
  readonly #config: Record<string, unknown>;
  readonly #scope: RunScope;
  readonly #type: SourceType;
  readonly #api: ApiTuning;
  #read = 0;

  /** The generated source step (the first): its rows are the only ones that may carry raw cells. */
  readonly #first: boolean;

  constructor(config: Record<string, unknown>, scope: RunScope, api: ApiTuning, first = false) {
    this.#first = first;
    this.#config = config;
    this.#scope = scope;
    this.#api = api;
    const type = config.type ?? scope.sourceType;
    if (!sourceTypes.includes(type as SourceType)) throw new StepConfigError(`config.type must be one of ${sourceTypes.join(', ')}`);
    this.#type = type as SourceType;
  }

  rowsRead(): number {
    return this.#read;
  }

  async *run(input: AsyncIterable<Batch>, ctx: StepContext): AsyncIterable<Batch> {
    yield* input;
    for await (const batch of this.#rows(ctx)) {
      this.#read += batch.length;
      yield batch;
    }
  }

  #rows(ctx: StepContext): AsyncIterable<Batch> {
    const c = this.#config;
    const scope = this.#scope;
    const conn = scope.connections.resolve(requireString(c, 'connectionId', 'source'));
    const batchSize = scope.batchSize;
    switch (this.#type) {
      case 'database': {
        const table = requireString(c, 'tableName', 'database source');
        const schema = scope.reach.schemaFor(conn, configString(c, 'schemaName'), 'config.schemaName');
        if (conn.vendor === 'SNOWFLAKE') return snowflakeTableRows(conn, { schema, table, batchSize }, (h, p) => scope.egress.check(h, p));
        return postgresTableRows(conn, scope.egress, {
          schema,
          table,
          batchSize,
          purpose: `source ${scope.runId}`,
          searchPath: scope.reach.pinnedSchema(conn),
          ...(this.#first && scope.rawCells.enabled ? { raw: scope.rawCells } : {}),
        });
      }
      case 'api': {
        const endpoint = requireString(c, 'endpoint', 'api source');
        const base = conn.accountUrl && /^https?:\/\//i.test(conn.accountUrl) ? conn.accountUrl : undefined;
        let url: URL;
        try {
          url = new URL(endpoint, base);
        } catch {
          throw new StepConfigError(`config.endpoint ${JSON.stringify(endpoint)} is not a URL`);
        }
        const auth = authHeaders(conn, url, scope.reach);
        const headers = isObject(c.headers) ? Object.fromEntries(Object.entries(c.headers).map(([k, v]) => [k, String(v)])) : {};
        return apiRows({
          endpoint: url.href,
          method: (configString(c, 'method') ?? 'GET').toUpperCase(),
          rootKey: configString(c, 'rootKey'),
          paginationKey: c.paginated === false ? undefined : configString(c, 'paginationKey'),
          headers: { ...headers, ...auth },
          egress: scope.egress,
          signal: scope.signal,
          batchSize,
          maxRetries: this.#api.maxRetries ?? API_DEFAULTS.maxRetries,
          backoffBaseMs: this.#api.backoffBaseMs ?? API_DEFAULTS.backoffBaseMs,
          backoffMaxMs: this.#api.backoffMaxMs ?? API_DEFAULTS.backoffMaxMs,
          timeoutMs: this.#api.timeoutMs ?? API_DEFAULTS.timeoutMs,
          maxPages: API_DEFAULTS.maxPages,
          limits: scope.limits,
          sleep: this.#api.sleep,
          log: (m) => ctx.log('warn', m),
        });
      }
      case 'file':
        return this.#fileRows(c, batchSize);
      case 's3': {
        const key = requireString(c, 'key', 's3 source');
        return s3Rows(conn, scope.egress, {
          bucket: requireString(c, 'bucket', 's3 source'),
          key,
          format: formatOf(key, c.format),
          region: configString(c, 'region') ?? 'us-east-1',
          delimiter: configString(c, 'delimiter'),
          rootKey: configString(c, 'rootKey'),
          batchSize,
          signal: scope.signal,
          limits: scope.limits,
        });
      }
      default:
        throw new StepConfigError(`source type ${String(this.#type)} is not supported`);
    }
  }

  async *#fileRows(c: Record<string, unknown>, batchSize: number): AsyncIterable<Batch> {
    const path = configString(c, 'path') ?? configString(c, 'filePath') ?? requireString(c, 'fileName', 'file source (config.path)');
    const format = formatOf(path, c.format);
    const handle = await openInside(this.#scope.reach.filesDir(), path);
    const stream = handle.createReadStream();
    try {
      yield* parseRows(stream, { format, batchSize, delimiter: configString(c, 'delimiter'), rootKey: configString(c, 'rootKey'), maxRecordBytes: this.#scope.limits.maxRecordBytes });
    } finally {
      stream.destroy();
      await handle.close().catch(() => {});
    }
  }
}
