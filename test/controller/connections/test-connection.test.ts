import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server, type Socket } from 'node:net';
import { describeError, testConnection } from '../../../controller/connections/test-connection.ts';
import { postgresEndpoint, snowflakeAccessUrl } from '../../../controller/lib/endpoints.ts';

/** A TCP server that accepts connections and never says a word: the "hangs forever" case. */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('test-connection helpers', () => {
  it('finds a PostgreSQL endpoint from host/port or an account URL', () => {
    expect(postgresEndpoint({ vendor: 'POSTGRESQL', host: 'db', port: 6543 })).toEqual({ host: 'db', port: 6543 });
    expect(postgresEndpoint({ vendor: 'POSTGRESQL', host: 'db' })).toEqual({ host: 'db', port: 5432 });
    expect(postgresEndpoint({ vendor: 'POSTGRESQL', accountUrl: 'postgresql://pg.internal:5433/x' })).toEqual({ host: 'pg.internal', port: 5433 });
    expect(postgresEndpoint({ vendor: 'POSTGRESQL', accountUrl: 'pg.internal' })).toEqual({ host: 'pg.internal', port: 5432 });
    expect(postgresEndpoint({ vendor: 'POSTGRESQL' })).toBeUndefined();
  });

  it('normalizes a Snowflake account URL', () => {
    expect(snowflakeAccessUrl('acme.snowflakecomputing.com')).toBe('https://acme.snowflakecomputing.com');
    expect(snowflakeAccessUrl('https://acme.snowflakecomputing.com/console')).toBe('https://acme.snowflakecomputing.com');
    expect(snowflakeAccessUrl('http://[bad')).toBeUndefined();
  });

  it('turns driver errors into sentences', () => {
    expect(describeError({ code: 'ECONNREFUSED' }, 'h:1')).toBe('Connection refused by h:1: is the server running and listening there?');
    expect(describeError({ code: '28P01' }, 'h:1', 'bob')).toBe('Authentication failed for user bob on h:1');
    expect(describeError({ code: 'ENOTFOUND' }, 'h:1')).toBe('Host of h:1 could not be resolved');
  });
});

describe('testConnection', () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  it('PostgreSQL: a refused port is a clear failure, at once', async () => {
    const port = await closedPort();
    const r = await testConnection({ vendor: 'POSTGRESQL', host: '127.0.0.1', port, database: 'test', username: 'u', password: 'p' }, { timeoutMs: 2000 });
    expect(r).toEqual({ ok: false, vendor: 'POSTGRESQL', message: `Connection refused by 127.0.0.1:${port}/test: is the server running and listening there?`, durationMs: expect.any(Number) });
  });

  it('PostgreSQL: a server that never answers is reported within the bound', async () => {
    const silent = await silentServer();
    cleanup = silent.close;
    const r = await testConnection({ vendor: 'POSTGRESQL', host: '127.0.0.1', port: silent.port, database: 'test', username: 'u' }, { timeoutMs: 400 });
    expect(r.ok).toBe(false);
    expect(r.message).toMatch(new RegExp(`^(No answer from 127\\.0\\.0\\.1:${silent.port}/test within 0\\.4 s|Could not connect to 127\\.0\\.0\\.1:${silent.port}/test: .*timeout.*)$`, 'i'));
  });

  it('PostgreSQL: without a host nothing is attempted', async () => {
    const r = await testConnection({ vendor: 'POSTGRESQL', database: 'x' }, { timeoutMs: 500 });
    expect(r).toMatchObject({ ok: false, message: 'A host (or an account URL such as postgresql://host:5432) is required' });
  });

  it('Snowflake: an unreachable account is a clear failure within a bounded time, never a hang', async () => {
    const port = await closedPort();
    const r = await testConnection({ vendor: 'SNOWFLAKE', accountUrl: `https://127.0.0.1:${port}`, username: 'svc', password: 'x' }, { timeoutMs: 5000 });
    expect(r.ok).toBe(false);
    expect(r.vendor).toBe('SNOWFLAKE');
    expect(r.message).toMatch(/^(Connection refused by Snowflake at 127\.0\.0\.1:\d+|No answer from Snowflake at 127\.0\.0\.1:\d+ within 5 s|Could not connect to Snowflake at 127\.0\.0\.1:\d+)/);
  });

  it('Snowflake: a server that accepts and stays silent is cut off at the bound', async () => {
    const silent = await silentServer();
    cleanup = silent.close;
    const r = await testConnection({ vendor: 'SNOWFLAKE', accountUrl: `https://127.0.0.1:${silent.port}`, username: 'svc', password: 'x' }, { timeoutMs: 800 });
    expect(r.ok).toBe(false);
  });

  it('Snowflake: missing account URL or user is refused before any network', async () => {
    expect((await testConnection({ vendor: 'SNOWFLAKE', username: 'x' })).message).toBe('An account URL such as https://<account>.snowflakecomputing.com is required');
    expect((await testConnection({ vendor: 'SNOWFLAKE', accountUrl: 'acme.snowflakecomputing.com' })).message).toBe('A username is required');
  });
});
