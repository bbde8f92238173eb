import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  /** The request path (one receiver can stand in for several notifiers). */
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, as signed. */
  raw: string;
  body: Record<string, unknown>;
}

/** A real HTTP receiver on 127.0.0.1 (port 0): records every POST; answers the queued statuses, then 200. */
export interface Receiver {
  /** `http://127.0.0.1:<port>`: append a path per notifier. */
  url: string;
  received: Received[];
  /** Statuses to answer next, in order (e.g. [500] makes the next request fail once). */
  failNext(...statuses: number[]): void;
  /** Every request answered so far, including the failed ones. */
  attempts: number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const statuses: number[] = [];
  const r: Receiver = {
    url: '',
    received: [],
    attempts: 0,
    failNext: (...s) => statuses.push(...s),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.attempts++;
      const status = statuses.shift() ?? 200;
      const raw = Buffer.concat(chunks).toString('utf8');
      if (status === 200) r.received.push({ path: req.url ?? '', headers: req.headers, raw, body: JSON.parse(raw) as Record<string, unknown> });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'fail');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return r;
}
