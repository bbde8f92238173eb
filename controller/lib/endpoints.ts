/** Where a connection points, from the fields a Connection manifest and a stored row both have. */
export interface EndpointFields {
  vendor?: string;
  host?: string;
  port?: number;
  accountUrl?: string;
}

/** A PostgreSQL endpoint from `host`/`port`, or from an account URL such as `postgresql://db:5432` or `db:5432`. */
export function postgresEndpoint(t: EndpointFields): { host: string; port: number } | undefined {
  if (t.host) return { host: t.host, port: t.port ?? 5432 };
  if (!t.accountUrl) return undefined;
  const raw = t.accountUrl.includes('://') ? t.accountUrl : `postgresql://${t.accountUrl}`;
  try {
    const url = new URL(raw);
    if (!url.hostname) return undefined;
    return { host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port ? Number(url.port) : (t.port ?? 5432) };
  } catch {
    return undefined;
  }
}

/** A Snowflake access URL (`https://acct.snowflakecomputing.com`), from a bare host too. */
export function snowflakeAccessUrl(accountUrl: string): string | undefined {
  const raw = accountUrl.includes('://') ? accountUrl : `https://${accountUrl}`;
  try {
    const url = new URL(raw);
    return url.hostname ? `${url.protocol}//${url.host}` : undefined;
  } catch {
    return undefined;
  }
}
