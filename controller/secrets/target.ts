import type { ConnectionTarget } from '../connections/test-connection.ts';
import { postgresEndpoint, snowflakeAccessUrl } from '../lib/endpoints.ts';

/**
 * Where a stored secret may be sent: the endpoint (host and port), database and user it was
 * stored with. A stored password is never sent anywhere else (Test Connection with another
 * target, a manifest pointing the reference at another host).
 */
export interface SecretTarget {
  vendor: string;
  host: string;
  port: number | null;
  database: string;
  username: string;
}

/** The target of a connection's fields, normalized (`host`+`port` and `postgresql://host:port` are the same). */
export function secretTarget(t: ConnectionTarget): SecretTarget {
  const vendor = t.vendor ?? 'SNOWFLAKE';
  let host = '';
  let port: number | null = null;
  if (vendor === 'POSTGRESQL') {
    const endpoint = postgresEndpoint(t);
    if (endpoint) ({ host, port } = endpoint);
  } else if (t.accountUrl) {
    const url = snowflakeAccessUrl(t.accountUrl);
    if (url) {
      const parsed = new URL(url);
      host = parsed.hostname;
      port = parsed.port ? Number(parsed.port) : 443;
    }
  }
  return { vendor, host: host.toLowerCase(), port, database: t.database ?? '', username: t.username ?? '' };
}

/** The fields (of host, port, database, username, vendor) in which `asked` differs from `stored`. */
export function targetDifferences(stored: SecretTarget, asked: SecretTarget): string[] {
  return (['vendor', 'host', 'port', 'database', 'username'] as const).filter((f) => stored[f] !== asked[f]);
}
