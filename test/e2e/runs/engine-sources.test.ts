import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkEgressPolicy } from '../../../controller/runs/engine/egress.ts';
import { resolver, runEngine, steps } from '../../controller/runs/engine/harness.ts';
import type { ResolvedConnection } from '../../../controller/runs/types.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function httpServer(handler: Handler): Promise<{ url: string; port: number; close: () => Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, port, close: () => new Promise((r) => { server.close(() => r()); server.closeAllConnections(); }) };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

/** An API connection whose address is the server: its credential goes there only (runs/reach.ts). */
const apiConnection = (srv: { url: string }): ResolvedConnection => ({ connectionId: 'API', vendor: 'SNOWFLAKE', accountUrl: srv.url, password: 'tok-123' });

describe('API source over a local HTTP server', () => {
  it('follows paginationKey (sent back as the query parameter of that name) until it is absent or null, with the array at rootKey', async () => {
    const seen: string[] = [];
    const srv = await httpServer((req, res) => {
      seen.push(`${req.url} ${req.headers.authorization}`);
      const cursor = new URL(req.url ?? '/', 'http://x').searchParams.get('next');
      if (!cursor) return json(res, 200, { data: [{ id: 1 }, { id: 2 }], next: 'p2' });
      if (cursor === 'p2') return json(res, 200, { data: [{ id: 3 }], next: 'p3' });
      return json(res, 200, { data: [{ id: 4 }], next: null });
    });
    try {
      const { result } = await runEngine({
        source: { connectionId: 'API', type: 'api' },
        connections: resolver({ API: apiConnection(srv) }),
        steps: steps(['source', { connectionId: 'API', endpoint: `${srv.url}/orders?since=1`, method: 'GET', paginated: true, paginationKey: 'next', rootKey: 'data' }]),
      });
      expect(result).toMatchObject({ status: 'succeeded', rowsRead: 4, rowsWritten: 4 });
      expect(seen).toEqual(['/orders?since=1 Bearer tok-123', '/orders?since=1&next=p2 Bearer tok-123', '/orders?since=1&next=p3 Bearer tok-123']);
    } finally {
      await srv.close();
    }
  });

  it('retries 429 and 5xx with capped exponential backoff (Retry-After honoured), then gives up with a clear error', async () => {
    let calls = 0;
    const srv = await httpServer((_req, res) => {
      calls++;
      if (calls === 1) return json(res, 429, {}, { 'retry-after': '2' });
      if (calls === 2) return json(res, 503, {});
      if (calls === 3) return json(res, 200, [{ id: 1 }]);
      return json(res, 500, {});
    });
    try {
      const delays: number[] = [];
      const sleep = async (ms: number) => void delays.push(ms);
      const ok = await runEngine(
        { source: { connectionId: 'API', type: 'api' }, connections: resolver({ API: apiConnection(srv) }), steps: steps(['source', { connectionId: 'API', endpoint: srv.url }]) },
        { sleep, apiBackoffBaseMs: 100 },
      );
      expect(ok.result).toMatchObject({ status: 'succeeded', rowsRead: 1 });
      expect(delays).toEqual([2000, 200]);
      delays.length = 0;
      const failed = await runEngine(
        { source: { connectionId: 'API', type: 'api' }, connections: resolver({ API: apiConnection(srv) }), steps: steps(['source', { connectionId: 'API', endpoint: srv.url }]) },
        { sleep, apiBackoffBaseMs: 100, apiMaxRetries: 3, apiBackoffMaxMs: 300 },
      );
      expect(failed.result.status).toBe('failed');
      expect(failed.result.error).toBe(`step source-0 (step-1-0) failed: API ${srv.url}/ answered 500 (gave up after 4 attempts)`);
      expect(delays).toEqual([100, 200, 300]);
    } finally {
      await srv.close();
    }
  });

  it('a request that does not answer within the timeout counts as a failure and is retried', async () => {
    let calls = 0;
    const srv = await httpServer((_req, res) => {
      if (++calls === 1) return; // never answers
      json(res, 200, [{ id: 1 }]);
    });
    try {
      const { result, logs } = await runEngine(
        { source: { connectionId: 'API', type: 'api' }, connections: resolver({ API: apiConnection(srv) }), steps: steps(['source', { connectionId: 'API', endpoint: srv.url }]) },
        { apiTimeoutMs: 200 },
      );
      expect(result).toMatchObject({ status: 'succeeded', rowsRead: 1 });
      expect(logs.some((l) => l.includes('did not answer within 200 ms: retry 1'))).toBe(true);
    } finally {
      await srv.close();
    }
  });

  it("egress: the controller's own address and port, and a redirect to a link-local address, are refused even when BI_PIPELINE_EGRESS lists them", async () => {
    const srv = await httpServer((_req, res) => {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      res.end();
    });
    try {
      const own = new NetworkEgressPolicy({ listen: { host: '127.0.0.1', port: srv.port }, allowHosts: ['127.0.0.1'] });
      const a = await runEngine({ source: { connectionId: 'API', type: 'api' }, connections: resolver({ API: apiConnection(srv) }), egress: own, steps: steps(['source', { connectionId: 'API', endpoint: srv.url }]) });
      expect(a.result.error).toBe(`step source-0 (step-1-0) failed: Egress to 127.0.0.1:${srv.port} is not allowed: it is the controller's own listening address`);
      const other = new NetworkEgressPolicy({ listen: { host: '127.0.0.1', port: 1 }, allowHosts: ['127.0.0.1', '169.254.169.254'] });
      const b = await runEngine({ source: { connectionId: 'API', type: 'api' }, connections: resolver({ API: apiConnection(srv) }), egress: other, steps: steps(['source', { connectionId: 'API', endpoint: srv.url }]) });
      expect(b.result.error).toBe('step source-0 (step-1-0) failed: Egress to 169.254.169.254:80 is not allowed: 169.254.169.254 is a link-local (metadata) address');
    } finally {
      await srv.close();
    }
  });
});

describe('S3 source against s3rver', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bi-s3rver-'));
  let server: { run(): Promise<AddressInfo>; close(): Promise<void> };
  let endpoint = '';
  beforeAll(async () => {
    server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir });
    const addr = await server.run();
    endpoint = `http://127.0.0.1:${addr.port}`;
    const s3 = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    await s3.send(new CreateBucketCommand({ Bucket: 'exports' }));
    await s3.send(new PutObjectCommand({ Bucket: 'exports', Key: 'day/orders.csv', Body: 'id,total\n1,10\n2,\n' }));
    await s3.send(new PutObjectCommand({ Bucket: 'exports', Key: 'day/orders.ndjson', Body: '{"id":1}\n{"id":2}\n{"id":3}\n' }));
    await s3.send(new PutObjectCommand({ Bucket: 'exports', Key: 'day/orders.json', Body: '{"items":[{"id":1},{"id":2}]}' }));
    await s3.send(new PutObjectCommand({ Bucket: 'exports', Key: 'day/big.ndjson', Body: '{"id":1,"note":"some text"}\n'.repeat(2000) }));
    s3.destroy();
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const S3 = (): ResolvedConnection => ({ connectionId: 'S3', vendor: 'POSTGRESQL', accountUrl: endpoint, username: 'S3RVER', password: 'S3RVER' });

  it('reads CSV, NDJSON and JSON (rootKey) objects from the configured endpoint with the connection credentials', async () => {
    const read = async (key: string, extra: Record<string, unknown> = {}) => {
      const { result } = await runEngine({
        source: { connectionId: 'S3', type: 's3' },
        connections: resolver({ S3: S3() }),
        steps: steps(['source', { connectionId: 'S3', bucket: 'exports', key, ...extra }], ['validate', { rules: [] }]),
        hooks: undefined,
      });
      return result;
    };
    expect(await read('day/orders.csv')).toMatchObject({ status: 'succeeded', rowsRead: 2 });
    expect(await read('day/orders.ndjson')).toMatchObject({ status: 'succeeded', rowsRead: 3 });
    expect(await read('day/orders.json', { rootKey: 'items' })).toMatchObject({ status: 'succeeded', rowsRead: 2 });
    const closed = await runEngine({
      source: { connectionId: 'S3', type: 's3' },
      connections: resolver({ S3: S3() }),
      egress: new NetworkEgressPolicy({ listen: { host: '127.0.0.1', port: 1 } }),
      steps: steps(['source', { connectionId: 'S3', bucket: 'exports', key: 'day/orders.csv' }]),
    });
    expect(closed.result.error).toBe(
      `step source-0 (step-1-0) failed: Egress to 127.0.0.1:${new URL(endpoint).port} is not allowed: 127.0.0.1 is an internal (loopback) address; list the host in BI_PIPELINE_EGRESS to allow it`,
    );
    const listed = await runEngine({
      source: { connectionId: 'S3', type: 's3' },
      connections: resolver({ S3: S3() }),
      egress: new NetworkEgressPolicy({ listen: { host: '127.0.0.1', port: 1 }, allowHosts: ['127.0.0.1'] }),
      steps: steps(['source', { connectionId: 'S3', bucket: 'exports', key: 'day/orders.csv' }], ['validate', { rules: [] }]),
    });
    expect(listed.result).toMatchObject({ status: 'succeeded', rowsRead: 2 });
    const capped = async (limits: { maxResponseBytes: number; maxRecordBytes: number }) =>
      (
        await runEngine(
          { source: { connectionId: 'S3', type: 's3' }, connections: resolver({ S3: S3() }), steps: steps(['source', { connectionId: 'S3', bucket: 'exports', key: 'day/big.ndjson' }]) },
          { limits },
        )
      ).result;
    expect((await capped({ maxResponseBytes: 16 * 1024, maxRecordBytes: 1024 })).error).toBe(
      'step source-0 (step-1-0) failed: S3 object s3://exports/day/big.ndjson: response larger than BI_RUN_MAX_RESPONSE_BYTES (16384 bytes)',
    );
    expect((await capped({ maxResponseBytes: 1024 * 1024, maxRecordBytes: 16 })).error).toBe(
      'step source-0 (step-1-0) failed: S3 object s3://exports/day/big.ndjson: record on line 1 larger than BI_RUN_MAX_RECORD_BYTES (16 bytes)',
    );
    expect(await capped({ maxResponseBytes: 1024 * 1024, maxRecordBytes: 1024 })).toMatchObject({ status: 'succeeded', rowsRead: 2000 });
    const missing = await read('day/none.csv');
    expect(missing.status).toBe('failed');
    expect(missing.error).toMatch(/S3 object s3:\/\/exports\/day\/none.csv at 127\.0\.0\.1:\d+: does not exist/);
  });
});
