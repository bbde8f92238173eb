import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress } from '../../types.ts';

/**
 * A lookup that answers only the addresses the egress check resolved: the connection goes to an
 * address that was checked, never to a second DNS answer (DNS rebinding).
 */
export function pinnedLookup(host: string, addresses: ResolvedAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const bare = hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    if (bare !== host.replace(/^\[|\]$/g, '').toLowerCase() || wanted.length === 0) {
      const err = Object.assign(new Error(`${hostname} has no checked address`), { code: 'ENOTFOUND' });
      if (options.all) return (callback as (e: Error | null, a: ResolvedAddress[]) => void)(err, []);
      return callback(err, '', 0);
    }
    if (options.all) return (callback as (e: Error | null, a: ResolvedAddress[]) => void)(null, wanted);
    const first = wanted[0] as ResolvedAddress;
    callback(null, first.address, first.family);
  };
}

/** Keep-alive agents of one source (pages reuse connections); `close()` ends them. */
export class SourceAgents {
  readonly http = new HttpAgent({ keepAlive: true, maxSockets: 4 });
  readonly https = new HttpsAgent({ keepAlive: true, maxSockets: 4 });
  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

export class HttpTimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

export interface PinnedRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  /** The checked addresses of `url.hostname`: the only ones connected to. */
  addresses: ResolvedAddress[];
  agents: SourceAgents;
  /** Aborts the request and its response body at any time. */
  signal: AbortSignal;
  /** The response's status and headers must arrive within this. */
  timeoutMs: number;
}

/** One HTTP request to a checked address; answers when the headers are in (the body is the caller's to read or destroy). */
export function pinnedRequest(o: PinnedRequest): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    if (o.signal.aborted) return reject(o.signal.reason as Error);
    const https = o.url.protocol === 'https:';
    const req = (https ? httpsRequest : httpRequest)(o.url, {
      method: o.method,
      headers: o.headers,
      agent: https ? o.agents.https : o.agents.http,
      lookup: pinnedLookup(o.url.hostname, o.addresses),
    });
    const onAbort = (): void => void req.destroy(o.signal.reason as Error);
    o.signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => req.destroy(new HttpTimeoutError(`did not answer within ${o.timeoutMs} ms`)), o.timeoutMs);
    req.on('response', (res) => {
      clearTimeout(timer);
      res.on('close', () => o.signal.removeEventListener('abort', onAbort));
      resolve(res);
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
      reject(err);
    });
    req.end();
  });
}
