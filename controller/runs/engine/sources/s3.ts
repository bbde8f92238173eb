import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { Readable } from 'node:stream';
import type { Batch, EgressPolicy, ResolvedConnection } from '../../types.ts';
import { type FileFormat, parseRows } from './files.ts';
import { pinnedLookup } from './http.ts';
import { type SourceLimits, SourceLimitError, boundedChunks } from './limits.ts';

export interface S3SourceOptions {
  bucket: string;
  key: string;
  format: FileFormat;
  region: string;
  delimiter?: string;
  rootKey?: string;
  batchSize: number;
  signal: AbortSignal;
  limits: SourceLimits;
}

/**
 * The endpoint of an S3-compatible service: the connection's account URL (`http://host:9000`),
 * or `host`/`port` (https unless the port is 80); path-style addressing, so any S3-compatible
 * server works.
 */
export function s3Endpoint(conn: ResolvedConnection): URL {
  if (conn.accountUrl && /^https?:\/\//i.test(conn.accountUrl)) return new URL(conn.accountUrl);
  if (conn.host) return new URL(`${conn.port === 80 ? 'http' : 'https'}://${conn.host}${conn.port ? `:${conn.port}` : ''}`);
  if (conn.accountUrl) return new URL(`https://${conn.accountUrl}`);
  throw new Error(`connection ${conn.connectionId} has no S3 endpoint (accountUrl such as https://s3.eu-west-1.amazonaws.com)`);
}

/** What went wrong, without the service's own message (its response's content): the error code and the HTTP status. */
function s3Failure(err: Error & { code?: string; $metadata?: { httpStatusCode?: number } }): string {
  const code = typeof err.code === 'string' ? err.code : err.name;
  const name = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(code) ? code : 'error';
  const status = err.$metadata?.httpStatusCode;
  return `failed: ${name}${status ? ` (HTTP ${status})` : ''}`;
}

/** An object's rows (CSV, JSON or NDJSON), streamed from the service; the access key is the connection's username, the secret its password. */
export async function* s3Rows(conn: ResolvedConnection, egress: EgressPolicy, o: S3SourceOptions): AsyncIterable<Batch> {
  const endpoint = s3Endpoint(conn);
  const addresses = await egress.endpoint(endpoint.hostname, endpoint.port ? Number(endpoint.port) : endpoint.protocol === 'https:' ? 443 : 80);
  // The SDK connects only to the addresses just checked (no second DNS answer).
  const lookup = pinnedLookup(endpoint.hostname, addresses);
  const agents = { httpAgent: new HttpAgent({ keepAlive: true, lookup }), httpsAgent: new HttpsAgent({ keepAlive: true, lookup }) };
  // Loaded on first use: the SDK is large, and most controllers never read from S3.
  const { GetObjectCommand, S3Client } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    endpoint: endpoint.href,
    region: o.region,
    forcePathStyle: true,
    credentials: { accessKeyId: conn.username ?? '', secretAccessKey: conn.password ?? '' },
    maxAttempts: 3,
    requestHandler: agents,
  });
  try {
    const res = await client.send(new GetObjectCommand({ Bucket: o.bucket, Key: o.key }), { abortSignal: o.signal }).catch((err: Error) => {
      throw new Error(`S3 object s3://${o.bucket}/${o.key} at ${endpoint.host}: ${err.name === 'NoSuchKey' ? 'does not exist' : s3Failure(err)}`);
    });
    if (!(res.Body instanceof Readable)) throw new Error(`S3 object s3://${o.bucket}/${o.key}: no body`);
    // The object is read as the steps take rows, never more than BI_RUN_MAX_RESPONSE_BYTES of it.
    const body = Readable.from(boundedChunks(res.Body, { maxBytes: o.limits.maxResponseBytes }), { objectMode: false });
    try {
      yield* parseRows(body, { format: o.format, batchSize: o.batchSize, delimiter: o.delimiter, rootKey: o.rootKey, maxRecordBytes: o.limits.maxRecordBytes });
    } catch (err) {
      if (err instanceof SourceLimitError) throw new SourceLimitError(`S3 object s3://${o.bucket}/${o.key}: ${err.message}`);
      throw err;
    } finally {
      body.destroy();
    }
  } finally {
    client.destroy();
    agents.httpAgent.destroy();
    agents.httpsAgent.destroy();
  }
}
