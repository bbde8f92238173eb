import { describe, expect, it } from 'vitest';
import type { ResolvedConnection } from '../../../../controller/runs/types.ts';
import { listen } from '../../../helpers/http-listener.ts';
import { allowAll, resolver, runEngine, steps } from './harness.ts';

const API: ResolvedConnection = { connectionId: 'API', vendor: 'POSTGRESQL' };
const SECRET = 'S3CR3T-internal-data';

describe('API source errors never echo the response', () => {
  it('status line, body, pagination token and redirect target stay out of the error and the logs', async () => {
    const srv = await listen((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/status') return void res.writeHead(404, `${SECRET} phrase`, { 'content-type': 'text/plain', 'content-length': '25' }).end(`${SECRET} body`);
      if (path === '/html') return void res.writeHead(200, { 'content-type': 'application/json' }).end(`<html>${SECRET}</html>`);
      if (path === '/element') return void res.writeHead(200, { 'content-type': 'application/json' }).end(`[{"a": ${SECRET}}]`);
      if (path === '/ndjson') return void res.writeHead(200, { 'content-type': 'application/x-ndjson' }).end(`{"a":1}\n${SECRET}\n`);
      if (path === '/shape') return void res.writeHead(200, { 'content-type': 'application/json' }).end(`{"data": "${SECRET}"}`);
      if (path === '/token') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: 1 }], next: SECRET }));
      res.writeHead(302, { location: `ftp://${SECRET}.example/${SECRET}` }).end();
    });
    const run = (path: string, config: Record<string, unknown> = {}) =>
      runEngine({ source: { connectionId: 'API', type: 'api' }, connections: resolver({ API }), egress: allowAll, steps: steps(['source', { connectionId: 'API', endpoint: `${srv.url}${path}`, ...config }]) });
    try {
      const expected: [string, Record<string, unknown>, string][] = [
        ['/status', {}, `API ${srv.url}/status answered 404 (25 bytes)`],
        ['/html', {}, `API ${srv.url}/html: the response is not an array`],
        ['/element', {}, `API ${srv.url}/element answered 200 with a body that is not JSON (29 bytes read)`],
        ['/ndjson', {}, `API ${srv.url}/ndjson: line 2 is not JSON`],
        ['/shape', { rootKey: 'data' }, `API ${srv.url}/shape: rootKey data is not an array`],
        ['/token', { rootKey: 'data', paginationKey: 'next' }, 'API pagination: page 3 would repeat an earlier token (the server does not advance)'],
        ['/redirect', {}, `API ${srv.url}/redirect: redirect 1 leads to a ftp URL (only http and https)`],
      ];
      for (const [path, config, error] of expected) {
        const { result, logs } = await run(path, config);
        expect(result.error, path).toBe(`step source-0 (step-1-0) failed: ${error}`);
        expect(JSON.stringify({ result, logs }), path).not.toContain('S3CR3T');
      }
    } finally {
      await srv.close();
    }
  });
});
