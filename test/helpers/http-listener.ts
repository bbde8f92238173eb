import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listener {
  url: string;
  port: number;
  requests: IncomingMessage[];
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 that records every request. */
export async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Listener> {
  const requests: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    requests.push(req);
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
