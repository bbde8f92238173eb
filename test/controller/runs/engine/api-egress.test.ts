import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../controller/config.ts';
import { NetworkEgressPolicy } from '../../../../controller/runs/engine/egress.ts';
import { egressPolicyFor } from '../../../../controller/runs/engine/index.ts';
import type { EgressPolicy, ResolvedConnection } from '../../../../controller/runs/types.ts';
import { listen } from '../../../helpers/http-listener.ts';
import { resolver, runEngine, steps } from './harness.ts';

// An API connection without a credential: what the egress rules decide, whatever reach says of credentials.
const API: ResolvedConnection = { connectionId: 'API', vendor: 'SNOWFLAKE' };
const rows = (res: ServerResponse): void => void res.writeHead(200, { 'content-type': 'application/json' }).end('[{"id":1},{"id":2}]');
const apiRun = (endpoint: string, egress: EgressPolicy) =>
  runEngine({ source: { connectionId: 'API', type: 'api' }, connections: resolver({ API }), egress, steps: steps(['source', { connectionId: 'API', endpoint }]) });

describe('API source: internal addresses are closed by default', () => {
  it('with BI_PIPELINE_EGRESS unset, a loopback endpoint is refused before any request; listed, it is read', async () => {
    const srv = await listen((_req, res) => rows(res));
    try {
      const closed = await apiRun(`${srv.url}/admin`, egressPolicyFor(loadConfig({ PORT: '1' })));
      expect(closed.result).toMatchObject({ status: 'failed', rowsRead: 0 });
      expect(closed.result.error).toBe(
        `step source-0 (step-1-0) failed: Egress to 127.0.0.1:${srv.port} is not allowed: 127.0.0.1 is an internal (loopback) address; list the host in BI_PIPELINE_EGRESS to allow it`,
      );
      const mapped = await apiRun(`http://[::ffff:7f00:1]:${srv.port}/admin`, egressPolicyFor(loadConfig({ PORT: '1' })));
      expect(mapped.result.error).toMatch(/is an internal \(loopback\) address/);
      expect(srv.requests).toHaveLength(0);
      const listed = await apiRun(`${srv.url}/rows`, egressPolicyFor(loadConfig({ PORT: '1', BI_PIPELINE_EGRESS: '127.0.0.1' })));
      expect(listed.result).toMatchObject({ status: 'succeeded', rowsRead: 2 });
      expect(srv.requests.map((r) => r.url)).toEqual(['/rows']);
    } finally {
      await srv.close();
    }
  });

  it('a redirect hop to an internal address is refused (the second server gets nothing)', async () => {
    const inner = await listen((_req, res) => rows(res));
    const outer = await listen((_req, res) => void res.writeHead(302, { location: `${inner.url}/secret` }).end());
    // "api.test" stands for a public host (its checked address happens to be the outer listener).
    const real = egressPolicyFor(loadConfig({ PORT: '1' }));
    const egress: EgressPolicy = {
      check: (h, p) => real.check(h, p),
      endpoint: async (h, p) => (h === 'api.test' ? [{ address: '127.0.0.1', family: 4 }] : real.endpoint(h, p)),
    };
    try {
      const { result } = await apiRun(`http://api.test:${outer.port}/start`, egress);
      expect(result.error).toBe(
        `step source-0 (step-1-0) failed: Egress to 127.0.0.1:${inner.port} is not allowed: 127.0.0.1 is an internal (loopback) address; list the host in BI_PIPELINE_EGRESS to allow it`,
      );
      expect(outer.requests).toHaveLength(1);
      expect(inner.requests).toHaveLength(0);
    } finally {
      await Promise.all([inner.close(), outer.close()]);
    }
  });

  it('the connection goes to the address the check resolved, never to a second DNS answer', async () => {
    const srv = await listen((_req, res) => rows(res));
    try {
      // rebind.test resolves only through the policy's lookup: the system's DNS would not find it.
      const egress = new NetworkEgressPolicy({ listen: { host: '127.0.0.1', port: 1 }, allowHosts: ['rebind.test'], lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
      const { result } = await apiRun(`http://rebind.test:${srv.port}/rows`, egress);
      expect(result).toMatchObject({ status: 'succeeded', rowsRead: 2 });
      expect(srv.requests[0]?.headers.host).toBe(`rebind.test:${srv.port}`);
    } finally {
      await srv.close();
    }
  });
});

describe('API source: redirects', () => {
  const egress = egressPolicyFor(loadConfig({ PORT: '1', BI_PIPELINE_EGRESS: '127.0.0.1' }));
  const headers = { cookie: 'sid=abc', 'x-api-key': 'k-1', 'x-trace': 't-1' };

  it('a redirect to another origin (another port) carries no credential header; the same origin keeps them', async () => {
    const other = await listen((_req, res) => rows(res));
    const first = await listen((req, res) => {
      if (req.url === '/start') return void res.writeHead(302, { location: '/moved' }).end();
      res.writeHead(307, { location: `${other.url}/landing` }).end();
    });
    try {
      const { result } = await runEngine({
        source: { connectionId: 'API', type: 'api' },
        // Its credential may go to its own address only (runs/reach.ts): the first listener.
        connections: resolver({ API: { connectionId: 'API', vendor: 'SNOWFLAKE', accountUrl: first.url, password: 'tok-123' } }),
        egress,
        steps: steps(['source', { connectionId: 'API', endpoint: `${first.url}/start`, headers }]),
      });
      expect(result).toMatchObject({ status: 'succeeded', rowsRead: 2 });
      expect(first.requests.map((r) => [r.url, r.headers.authorization, r.headers.cookie, r.headers['x-api-key']])).toEqual([
        ['/start', 'Bearer tok-123', 'sid=abc', 'k-1'],
        ['/moved', 'Bearer tok-123', 'sid=abc', 'k-1'],
      ]);
      expect(other.requests).toHaveLength(1);
      const landed = other.requests[0]?.headers ?? {};
      expect([landed.authorization, landed['proxy-authorization'], landed.cookie, landed['x-api-key'], landed['x-trace']]).toEqual([undefined, undefined, undefined, undefined, 't-1']);
    } finally {
      await Promise.all([first.close(), other.close()]);
    }
  });

  it('more than 5 redirects fail the step', async () => {
    const loop = await listen((req, res) => void res.writeHead(302, { location: `/hop${Number(req.url?.slice(4) || 0) + 1}` }).end());
    try {
      const { result } = await apiRun(`${loop.url}/hop0`, egress);
      expect(result.error).toBe(`step source-0 (step-1-0) failed: API ${loop.url}/hop0: more than 5 redirects`);
      expect(loop.requests).toHaveLength(6);
    } finally {
      await loop.close();
    }
  });
});
