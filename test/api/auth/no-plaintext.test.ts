import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../controller/log.ts';
import { cookiesOf, TEST_PASSWORD_COST } from '../../helpers/auth.ts';
import { makeTestRuntime, type TestApp } from '../../helpers/runtime.ts';
import { makeAuthApp } from './fixture.ts';

describe('no plaintext secrets at rest or in logs', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  it('passwords, keys, session IDs and tokens appear neither in the SQLite files nor in the log output', async () => {
    let logged = '';
    const out = new Writable({
      write(chunk: Buffer, _enc, cb) {
        logged += chunk.toString('utf8');
        cb();
      },
    });
    const logger = createLogger({ level: 'trace', out });
    const rt = await makeTestRuntime({ log: logger, auth: { passwordCost: TEST_PASSWORD_COST } });
    t = await makeAuthApp({ from: rt, logger });
    const password = 'Sup3r-s3cret-passphrase';
    await t.rt.auth.ensureAdmin('root', password);

    await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: 'root', password: 'wrong-Sup3r' } });
    const login = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: 'root', password } });
    const { userId, csrfToken } = login.json() as { userId: string; csrfToken: string };
    const jar = cookiesOf(login.headers['set-cookie']);
    const cookie = `LASID=${jar.LASID}; ATN=${jar.ATN}; RTN=${jar.RTN}`;
    const created = await t.app.inject({ method: 'POST', url: `/v1/api-keys/${userId}`, headers: { cookie, ctn: csrfToken }, payload: { label: 'ci' } });
    const { apiKey } = created.json() as { apiKey: string };
    for (const headers of [{ authorization: `Bearer ${apiKey}` }, { 'x-api-key': apiKey }] as Record<string, string>[]) {
      expect((await t.app.inject({ method: 'GET', url: '/probe/a', headers })).statusCode).toBe(200);
    }
    const refreshed = await t.app.inject({ method: 'POST', url: '/v1/auth/refresh', headers: { cookie } });
    const rotated = cookiesOf(refreshed.headers['set-cookie']);
    const newCsrf = (refreshed.json() as { csrfToken: string }).csrfToken;
    t.rt.auth.flushLastUsed();

    const secrets: Record<string, string> = {
      password,
      wrongPassword: 'wrong-Sup3r',
      apiKeySecretPart: apiKey.slice(16),
      csrfToken,
      newCsrf,
      LASID: jar.LASID,
      ATN: jar.ATN,
      RTN: jar.RTN,
      rotatedATN: rotated.ATN,
      rotatedRTN: rotated.RTN,
    };
    const dataDir = join(t.dir, 'data');
    const scan = () => {
      const files = readdirSync(dataDir).map((f) => readFileSync(join(dataDir, f)));
      expect(files.length).toBeGreaterThan(0);
      for (const [name, secret] of Object.entries(secrets)) {
        for (const bytes of files) expect(bytes.includes(Buffer.from(secret)), `${name} in the store`).toBe(false);
        expect(logged.includes(secret), `${name} in the log`).toBe(false);
      }
    };
    scan(); // live files: database and WAL
    await t.app.close();
    await t.rt.stop();
    scan(); // after the checkpoint at close
    expect(logged).toContain('login');
    expect(logged).toContain('api key created');
  });
});
