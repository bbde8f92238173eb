import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loginAs, type TestSession } from '../../helpers/auth.ts';
import { runCli } from '../../helpers/cli.ts';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';
import { clientManifest, packageWithDashboard, writeCoreModel } from '../../controller/kinds/client/fixtures.ts';
import { canonicalJson } from '../../../controller/audit/canonical.ts';
import { GENESIS_HASH, verifyAudit } from '../../../controller/audit/log.ts';
import { sha256 } from '../../../controller/hash.ts';

/** The hash-chained audit log through the API and `bictl audit verify` (docs/contract/design.md, "Tenant lifecycle and the audit log"). */

let t: TestApp;
let admin: TestSession;
let member: TestSession;
afterEach(async () => t?.close());

const read = (s: TestSession, query = '') => t.app.inject({ method: 'GET', url: `/v1/bi/admin/audit/${s.userId}${query}`, headers: s.headers });

async function setup(): Promise<void> {
  t = await makeTestApp();
  writeCoreModel(t);
  t.write('clients/ACME.yaml', clientManifest(packageWithDashboard('ACME', { connectionId: 'D2026A00001' })));
  t.write('clients/GLOBEX.yaml', clientManifest(packageWithDashboard('GLOBEX', { connectionId: 'D2026A00002' })));
  await t.sync();
  admin = await loginAs(t, { username: 'root', role: 'admin' });
  member = await loginAs(t, { username: 'mia', role: 'member', clients: ['ACME'] });
}

describe('the audit log', () => {
  it('user, grant and key changes made through the API name the admin who made them', async () => {
    await setup();
    const change = await t.app.inject({ method: 'PATCH', url: `/v1/bi/admin/users/${member.userId}/${admin.userId}`, headers: admin.headers, payload: { role: 'member', clients: ['GLOBEX'], disabled: true } });
    expect(change.statusCode).toBe(200);
    const created = await t.app.inject({ method: 'POST', url: `/v1/api-keys/${admin.userId}`, headers: admin.headers, payload: { label: 'k' } });
    const keyId = created.json().keyId as string;
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/api-keys/${admin.userId}/${keyId}`, headers: admin.headers })).statusCode).toBe(200);
    const entries = (await read(admin, '?limit=1000')).json().entries as { action: string; actor: { type: string; id: string } }[];
    const actorsOf = (action: string) => entries.filter((e) => e.action === action).map((e) => e.actor);
    const byAdmin = { type: 'user', id: admin.userId };
    expect(actorsOf('user.update')).toContainEqual(byAdmin);
    expect(actorsOf('grant.remove')).toEqual([byAdmin]);
    expect(actorsOf('grant.add')).toContainEqual(byAdmin);
    expect(actorsOf('key.create')).toContainEqual(byAdmin);
    expect(actorsOf('key.revoke')).toEqual([byAdmin]);
  });

  it('records applied files (actor controller), API writes (actor user), lifecycle transitions and login failures, chained from 64 zeros', async () => {
    await setup();
    expect((await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: 'root', password: 'wrong-password-1' } })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: `/v1/bi/admin/clients/ACME/suspend/${admin.userId}`, headers: admin.headers, payload: {} })).statusCode).toBe(200);

    const res = await read(admin, '?limit=1000');
    expect(res.statusCode).toBe(200);
    const { entries, nextCursor } = res.json();
    expect(nextCursor).toBeNull();
    const seqs = entries.map((e: { seq: number }) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(seqs.at(-1)).toBe(1);
    const asc = [...entries].reverse();
    expect(asc[0].prevHash).toBe(GENESIS_HASH);
    for (const [i, e] of asc.entries()) {
      const { hash, ...body } = e;
      expect(hash).toBe(sha256(e.prevHash + canonicalJson(body)));
      if (i > 0) expect(e.prevHash).toBe(asc[i - 1].hash);
    }
    const find = (action: string, clientId?: string) => asc.find((e: { action: string; clientId?: string }) => e.action === action && (clientId === undefined || e.clientId === clientId));
    expect(find('apply', 'ACME')).toMatchObject({ actor: { type: 'controller', id: 'controller' }, object: { kind: 'Client', id: 'ACME' }, result: 'ok' });
    expect(find('login.failed')).toMatchObject({ actor: { type: 'user', id: 'root' }, result: 'refused' });
    expect(find('client.suspend', 'ACME')).toMatchObject({ actor: { type: 'user', id: admin.userId }, result: 'ok' });
    const suspendWrite = asc.filter((e: { action: string; clientId?: string; actor: { type: string } }) => e.action === 'apply' && e.clientId === 'ACME' && e.actor.type === 'user');
    expect(suspendWrite).toHaveLength(1);
    expect(suspendWrite[0].before).not.toBe(suspendWrite[0].after);

    // A member sees only the entries of their clients; filters and pages.
    const mine = (await read(member, '?limit=1000')).json().entries;
    expect(mine.length).toBeGreaterThan(0);
    expect(new Set(mine.map((e: { clientId?: string }) => e.clientId))).toEqual(new Set(['ACME']));
    const page1 = (await read(admin, '?limit=2')).json();
    expect(page1.entries.map((e: { seq: number }) => e.seq)).toEqual([seqs[0], seqs[1]]);
    const page2 = (await read(admin, `?limit=2&cursor=${page1.nextCursor}`)).json();
    expect(page2.entries[0].seq).toBe(seqs[2]);
    // `actor`: a type, `type:id`, or a bare ID of any type.
    const byUser = (await read(admin, `?actor=user:${admin.userId}&limit=1000`)).json().entries;
    expect(byUser.length).toBeGreaterThan(0);
    expect((await read(admin, `?actor=${admin.userId}&limit=1000`)).json().entries).toEqual(byUser);
    expect((await read(admin, '?actor=controller&limit=1000')).json().entries.every((e: { actor: { type: string } }) => e.actor.type === 'controller')).toBe(true);
    const byAction = (await read(admin, '?action=client.suspend')).json().entries;
    expect(byAction.map((e: { clientId: string }) => e.clientId)).toEqual(['ACME']);
    expect((await read(admin, '?limit=1001')).statusCode).toBe(400);
    expect((await read(admin, '?since=yesterday')).json()).toEqual({ success: false, error: expect.stringContaining('since'), code: 'validation', problems: expect.any(Array) });

    // The export: NDJSON, oldest first, every entry.
    const nd = await read(admin, '?format=ndjson');
    expect(nd.statusCode).toBe(200);
    expect(nd.headers['content-type']).toContain('application/x-ndjson');
    const lines = nd.body.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toEqual(asc);
  });

  it('refuses UPDATE and DELETE; an entry altered from outside is found by bictl audit verify', async () => {
    await setup();
    expect(verifyAudit(t.rt.db)).toMatchObject({ ok: true });
    expect(() => t.rt.db.prepare("UPDATE audit_log SET action = 'x' WHERE seq = 2").run()).toThrow(/append-only/);
    expect(() => t.rt.db.prepare('DELETE FROM audit_log WHERE seq = 2').run()).toThrow(/append-only/);
    const dbPath = join(t.dir, 'data', 'bi.sqlite');
    const ok = await runCli(['--db', dbPath, 'audit', 'verify']);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^ok: \d+ entries$/);
    t.rt.db.exec('DROP TRIGGER audit_log_no_update');
    t.rt.db.prepare("UPDATE audit_log SET result = 'failed' WHERE seq = 2").run();
    const broken = await runCli(['--db', dbPath, 'audit', 'verify']);
    expect(broken).toMatchObject({ code: 1, out: 'broken at seq 2' });
  });
});
