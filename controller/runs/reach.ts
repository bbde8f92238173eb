/**
 * What a run may reach (docs/contract/design.md, "Containment of tenant work"): the one place that decides
 * where a connection's credential may go, which schema a shared connection pins for the
 * pipeline's tenant and which files folder a pipeline reads. The import check and the run's
 * steps ask the same questions of the same object, so a stored pipeline that predates a rule is
 * refused at run time with the words the import would have used.
 *
 * Built from plain data (`owner`, the files root, the connection's stored address), so the run's
 * worker thread rebuilds it from what crosses the thread boundary.
 */
import { join } from 'node:path';
import { resolveSteps } from '../kinds/pipeline/normalize.ts';
import type { PipelineSpec } from '../kinds/pipeline/types.ts';
import type { Problem } from '../types.ts';

/** `passwordEnv` names only credential variables: the controller's own settings are never read through a connection. */
export const PASSWORD_ENV_PATTERN = /^BI_CONN_[A-Z0-9_]+$/;

/** Why `name` may not be a `passwordEnv`, or undefined when it may. */
export function passwordEnvRefusal(name: string): string | undefined {
  return PASSWORD_ENV_PATTERN.test(name) ? undefined : `passwordEnv ${JSON.stringify(name)} must name a credential variable matching BI_CONN_[A-Z0-9_]+`;
}

/** What reach knows of a connection: where it points, whether it holds a credential, how it is shared. Never the credential. */
export interface ReachConnection {
  connectionId: string;
  vendor: 'POSTGRESQL' | 'SNOWFLAKE';
  accountUrl?: string;
  database?: string;
  warehouse?: string;
  /** A platform connection every tenant may use. */
  shared?: boolean;
  /** A shared connection's schema per tenant: a pattern with `{clientId}` (e.g. `t_{clientId}`). */
  tenantSchema?: string;
}

export interface RunReachOptions {
  /** The client owning the pipeline (its connections' owner), or null for an unowned (admin-only) pipeline. */
  owner: string | null;
  /** `BI_PIPELINE_FILES_DIR`. */
  filesRoot: string;
}

/** A refusal: a message naming what was refused and why (no credential, no content). */
export type Refusal = string | undefined;

/** A warehouse connection: its password is for the database, never sent over HTTP. */
export function isDatabaseConnection(c: ReachConnection): boolean {
  return c.vendor === 'POSTGRESQL' || Boolean(c.database) || Boolean(c.warehouse);
}

/** The HTTP origin of a connection's own address (`accountUrl`), or undefined when it has none. */
export function credentialOrigin(c: ReachConnection): string | undefined {
  if (isDatabaseConnection(c) || !c.accountUrl) return undefined;
  const raw = c.accountUrl.includes('://') ? c.accountUrl : `https://${c.accountUrl}`;
  try {
    const url = new URL(raw);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** A tenant's schema on a shared connection: the pattern with `{clientId}` replaced by the lowercased client ID. */
export function tenantSchemaOf(pattern: string, clientId: string): string {
  return pattern.split('{clientId}').join(clientId.toLowerCase());
}

/** The answers for one run (or one import check) of a pipeline owned by `owner`. */
export class RunReach {
  readonly owner: string | null;
  readonly #filesRoot: string;

  constructor(opts: RunReachOptions) {
    this.owner = opts.owner;
    this.#filesRoot = opts.filesRoot;
  }

  /**
   * May a request to `url` carry `conn`'s credential? Only to the origin (scheme, host, port) of
   * the connection's own address; a database connection's password never goes over HTTP.
   */
  credentialRefusal(conn: ReachConnection, url: URL): Refusal {
    if (isDatabaseConnection(conn)) return `connection ${conn.connectionId} is a database connection: its password is never sent over HTTP`;
    const origin = credentialOrigin(conn);
    if (!origin) return `connection ${conn.connectionId} has no HTTP address (accountUrl): its credential goes nowhere else`;
    if (url.origin !== origin) return `${url.origin} is not the address of connection ${conn.connectionId} (${origin}): its credential is sent only there`;
    return undefined;
  }

  /**
   * An `api` source's endpoint for a connection that holds a credential: resolved against the
   * connection's address, it must stay on that origin (an absolute URL elsewhere is refused).
   * `field` names the endpoint in the message (`source.config.endpoint`).
   */
  endpointRefusal(conn: ReachConnection, endpoint: string, field: string): Refusal {
    // the base the api source resolves a relative endpoint against
    const base = conn.accountUrl && /^https?:\/\//i.test(conn.accountUrl) ? conn.accountUrl : undefined;
    let url: URL;
    try {
      url = new URL(endpoint, base);
    } catch {
      return undefined; // not a URL: the run says so
    }
    const refused = this.credentialRefusal(conn, url);
    return refused && `${field} ${refused}`;
  }

  /** The schema a shared connection pins for this pipeline's tenant, or undefined when nothing is pinned. */
  pinnedSchema(conn: ReachConnection): string | undefined {
    if (this.owner === null || !conn.shared || !conn.tenantSchema) return undefined;
    return tenantSchemaOf(conn.tenantSchema, this.owner);
  }

  /**
   * May this pipeline name schema `named` (undefined: none named) on `conn`? A tenant's pipeline
   * on a shared connection may name only its own schema; `field` names the setting in the message.
   */
  schemaRefusal(conn: ReachConnection, named: string | undefined, field: string): Refusal {
    if (this.owner === null || !conn.shared) return undefined;
    const pinned = this.pinnedSchema(conn);
    if (!pinned) return `connection ${conn.connectionId} is shared without tenantSchema: client ${this.owner}'s pipelines may not use it`;
    if (named !== undefined && named !== pinned) return `${field} must be ${pinned} (client ${this.owner}'s schema on shared connection ${conn.connectionId})`;
    return undefined;
  }

  /** The schema a step works in: the pinned one when the connection pins one, else the named one or the connection's default. */
  schemaFor(conn: ReachConnection & { schema?: string }, named: string | undefined, field: string): string | undefined {
    const refused = this.schemaRefusal(conn, named, field);
    if (refused) throw new ReachRefused(refused);
    return this.pinnedSchema(conn) ?? named ?? conn.schema;
  }

  /** The folder this pipeline's files are read from: its tenant's own, or the whole root when unowned. */
  filesDir(): string {
    return this.owner === null ? this.#filesRoot : join(this.#filesRoot, this.owner);
  }
}

/** A run step asked for what its pipeline may not reach: the step fails with this message. */
export class ReachRefused extends Error {}

/** A stored connection as the import check sees it: its address and whether it holds a credential (never the credential). */
export interface StoredReachConnection extends ReachConnection {
  hasCredential: boolean;
}

const DESTINATION_STEPS = new Set(['load', 'stage', 'reconcile']);
const SCHEMA_STEPS = new Set(['source', 'db_lookup', 'load', 'stage', 'reconcile']);

/**
 * What an import of `spec` may not reach, each problem naming the payload field that asks for it
 * (`source.config.endpoint`, `steps[3].config.schemaName`, `destination.schemaName`): an api
 * endpoint off its connection's origin, a schema other than the tenant's on a shared connection.
 * Unknown connections are left to the connection check.
 */
export function pipelineReachProblems(reach: RunReach, spec: PipelineSpec, lookup: (connectionId: string) => StoredReachConnection | undefined): Problem[] {
  const problems: Problem[] = [];
  const add = (path: string, message: Refusal): void => {
    const text = message && (message.startsWith(path) ? message : `${path}: ${message}`);
    // Steps inheriting the destination's schema would each repeat its problem.
    if (text && !problems.some((p) => p.message === text)) problems.push({ path, message: text });
  };
  resolveSteps(spec).forEach((step, i) => {
    const own = i === 0 ? spec.source.config ?? {} : (spec.steps[i - 1]?.config ?? {});
    const ownPrefix = i === 0 ? 'source.config' : `steps[${i - 1}].config`;
    // Where a value the step inherited was written: the source's config, or the destination.
    const pathOf = (key: string): string => {
      if (key in own) return `${ownPrefix}.${key}`;
      if (step.type === 'source') return key === 'connectionId' ? 'source.connectionId' : `source.config.${key}`;
      return DESTINATION_STEPS.has(step.type) ? `destination.${key}` : `${ownPrefix}.${key}`;
    };
    const id = step.config.connectionId;
    const conn = typeof id === 'string' ? lookup(id) : undefined;
    if (!conn) return;
    const type = step.type === 'source' ? (step.config.type ?? spec.source.type) : undefined;
    const endpoint = step.config.endpoint;
    if (type === 'api' && typeof endpoint === 'string' && conn.hasCredential) {
      const field = pathOf('endpoint');
      add(field, reach.endpointRefusal(conn, endpoint, field));
    }
    if (SCHEMA_STEPS.has(step.type) && (step.type !== 'source' || type === 'database')) {
      const named = step.config.schemaName;
      const field = pathOf('schemaName');
      add(field, reach.schemaRefusal(conn, typeof named === 'string' && named.trim() !== '' ? named : undefined, field));
    }
  });
  return problems;
}
