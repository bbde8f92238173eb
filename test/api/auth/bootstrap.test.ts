import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { startServer } from '../../../api/server.ts';
import { createLogger } from '../../../controller/log.ts';
import { loadConfig } from '../../../controller/config.ts';
import { testSchemas } from '../../helpers/schemas.ts';

describe('first admin from BI_ADMIN_USER / BI_ADMIN_PASSWORD', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-boot-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const config = (env: Record<string, string>) =>
    loadConfig({ ...env, BI_LOG_LEVEL: 'silent' }, { port: 0, manifestsDir: join(dir, 'manifests'), dbPath: join(dir, 'data', 'bi.sqlite'), dataDir: join(dir, 'data') });

  it('is created at start when absent, can log in, and is not created twice', async () => {
    const env = { BI_ADMIN_USER: 'root', BI_ADMIN_PASSWORD: 'first-admin-password' };
    const s1 = await startServer(config(env), { schemas: testSchemas() });
    const login = await s1.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: 'root', password: 'first-admin-password' } });
    expect(login.statusCode).toBe(200);
    const { userId } = login.json() as { userId: string };
    await s1.close();
    const s2 = await startServer(config({ ...env, BI_ADMIN_PASSWORD: 'a-changed-password' }), { schemas: testSchemas() });
    const users = s2.runtime.db.prepare('SELECT user_id, username, role FROM users').all();
    expect(users).toEqual([{ user_id: userId, username: 'root', role: 'admin' }]);
    // The environment does not overwrite an existing admin's password.
    expect((await s2.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: 'root', password: 'first-admin-password' } })).statusCode).toBe(200);
    await s2.close();
  });

  it('a first start without any user says where the console is and how to create the first admin; not once a user exists', async () => {
    const lines: string[] = [];
    const out = new Writable({ write: (chunk: Buffer, _enc, cb) => (lines.push(chunk.toString('utf8')), cb()) });
    const log = createLogger({ level: 'info', out, batch: false });
    const s1 = await startServer(config({}), { log, schemas: testSchemas() });
    const listening = lines.find((l) => / INFO {2}listening /.test(l)) ?? '';
    expect(listening).toContain(`console=${s1.url}/ui/`);
    expect(lines.filter((l) => / WARN {2}/.test(l)).map((l) => l.replace(/^\S+ WARN {2}/, '').trim())).toEqual([
      `no user exists yet, so nobody can log in to the console at ${s1.url}/ui/: create the first admin with BI_ADMIN_USER and BI_ADMIN_PASSWORD (at least 8 characters) and start again, or run: echo 'a-long-password' | npx bictl users add admin --admin`,
    ]);
    await s1.close();
    lines.length = 0;
    const s2 = await startServer(config({ BI_ADMIN_USER: 'root', BI_ADMIN_PASSWORD: 'first-admin-password' }), { log, schemas: testSchemas() });
    expect(lines.filter((l) => / WARN {2}/.test(l))).toEqual([]);
    await s2.close();
  });

  it('a too-short password stops the start with a clear message', async () => {
    await expect(startServer(config({ BI_ADMIN_USER: 'root', BI_ADMIN_PASSWORD: 'short' }), { schemas: testSchemas() })).rejects.toThrow(
      'BI_ADMIN_USER / BI_ADMIN_PASSWORD: password must be at least 8 characters',
    );
  });
});
