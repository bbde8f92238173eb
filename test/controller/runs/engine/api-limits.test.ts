import type { ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { SourceLimits } from '../../../../controller/runs/engine/sources/limits.ts';
import type { ResolvedConnection } from '../../../../controller/runs/types.ts';
import { listen } from '../../../helpers/http-listener.ts';
import { allowAll, resolver, runEngine, steps } from './harness.ts';

const API: ResolvedConnection = { connectionId: 'API', vendor: 'POSTGRESQL' };
const limits: SourceLimits = { maxResponseBytes: 64 * 1024, maxRecordBytes: 1024 };

/** Answers `head`, then `unit` again and again as fast as the client reads, until it hangs up. */
function endless(res: ServerResponse, head: string, unit: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write(head);
  const pump = (): void => {
    while (!res.destroyed && res.write(unit));
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
}

const run = (endpoint: string, config: Record<string, unknown> = {}) =>
  runEngine(
    { source: { connectionId: 'API', type: 'api' }, connections: resolver({ API }), egress: allowAll, steps: steps(['source', { connectionId: 'API', endpoint, ...config }]) },
    { limits, batchSize: 100 },
  );

describe('API source: bounded memory', () => {
  it('an endless JSON array fails the step at BI_RUN_MAX_RESPONSE_BYTES, naming it and the size, and hangs up', async () => {
    let closed = false;
    const srv = await listen((_req, res) => {
      res.on('close', () => (closed = true));
      endless(res, '{"data":[', '{"id":1,"name":"row"},'.repeat(500));
    });
    try {
      const { result } = await run(`${srv.url}/all`, { rootKey: 'data' });
      expect(result.status).toBe('failed');
      expect(result.error).toBe(`step source-0 (step-1-0) failed: API ${srv.url}/all: response larger than BI_RUN_MAX_RESPONSE_BYTES (65536 bytes)`);
      expect(result.rowsRead).toBeGreaterThan(0);
      await expect.poll(() => closed).toBe(true);
    } finally {
      await srv.close();
    }
  });

  it('an endless record fails at BI_RUN_MAX_RECORD_BYTES (JSON element and NDJSON line)', async () => {
    const srv = await listen((req, res) => {
      if (req.url === '/ndjson') {
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        res.write('{"id":1}\n{"id":"');
        const pump = (): void => {
          while (!res.destroyed && res.write('y'.repeat(4096)));
          if (!res.destroyed) res.once('drain', pump);
        };
        return pump();
      }
      endless(res, '[{"id":1},{"blob":"', 'x'.repeat(4096));
    });
    try {
      const json = await run(`${srv.url}/json`);
      expect(json.result.error).toBe(`step source-0 (step-1-0) failed: API ${srv.url}/json: record at element 2 larger than BI_RUN_MAX_RECORD_BYTES (1024 bytes)`);
      const nd = await run(`${srv.url}/ndjson`);
      expect(nd.result.error).toBe(`step source-0 (step-1-0) failed: API ${srv.url}/ndjson: record on line 2 larger than BI_RUN_MAX_RECORD_BYTES (1024 bytes)`);
    } finally {
      await srv.close();
    }
  });

  it('pages stream too: the pagination token after the array, NDJSON by content type, gzip decoded (and counted decoded)', async () => {
    const seen: string[] = [];
    const srv = await listen((req, res) => {
      seen.push(req.url ?? '');
      const page = new URL(req.url ?? '/', 'http://x').searchParams.get('next');
      if (req.url?.startsWith('/nd')) return void res.writeHead(200, { 'content-type': 'application/x-ndjson' }).end('{"id":1}\n\n{"id":2}\n3\n');
      if (req.url?.startsWith('/bomb')) {
        // 1 MiB of JSON, a few KiB on the wire: the cap counts what is parsed.
        return void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipSync(`[${'0,'.repeat(512 * 1024)}0]`));
      }
      const body = page ? JSON.stringify({ data: [{ id: 3 }], next: null }) : JSON.stringify({ data: [{ id: 1 }, { id: 2 }], next: 'p2' });
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipSync(body));
    });
    try {
      const paged = await run(`${srv.url}/list`, { rootKey: 'data', paginationKey: 'next' });
      expect(paged.result).toMatchObject({ status: 'succeeded', rowsRead: 3 });
      expect(seen).toEqual(['/list', '/list?next=p2']);
      const nd = await run(`${srv.url}/nd`);
      expect(nd.result).toMatchObject({ status: 'succeeded', rowsRead: 3 });
      const bomb = await run(`${srv.url}/bomb`);
      expect(bomb.result.error).toBe(`step source-0 (step-1-0) failed: API ${srv.url}/bomb: response larger than BI_RUN_MAX_RESPONSE_BYTES (65536 bytes)`);
    } finally {
      await srv.close();
    }
  });
});
