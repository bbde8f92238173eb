import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyPassword } from '../../../controller/auth/passwords.ts';
import type { CliIO } from '../../../controller/cli/io.ts';
import { main } from '../../../controller/cli/main.ts';
import { openStore } from '../../../controller/store/db.ts';
import { testSchemas } from '../../helpers/runtime.ts';

describe('bictl users', () => {
  let dir: string;
  let db: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-users-'));
    db = join(dir, 'data', 'bi.sqlite');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const run = async (args: string[], stdin = '') => {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIO = { out: (l) => out.push(l), err: (l) => err.push(l), env: { BI_MANIFESTS_DIR: join(dir, 'manifests') }, stdin: Readable.from([stdin]) };
    const code = await main(['node', 'bictl', '--db', db, ...args], io, { schemas: testSchemas() });
    return { code, out, err };
  };

  it('users add <name> --admin reads the password from stdin and prints only the userId', async () => {
    const r = await run(['users', 'add', 'alice', '--admin'], 'correct horse battery\nignored\n');
    expect(r).toEqual({ code: 0, out: [expect.stringMatching(/^U\d{4}A00001$/)], err: [] });
    const store = openStore(db);
    const row = store.prepare('SELECT user_id, username, role, password_hash FROM users').get() as Record<string, string>;
    store.close();
    expect(row).toMatchObject({ user_id: r.out[0], username: 'alice', role: 'admin' });
    expect(await verifyPassword('correct horse battery', row.password_hash)).toBe(true);
  });

  it('without --admin the user is a member; users list shows both', async () => {
    await run(['users', 'add', 'alice', '--admin'], 'correct horse battery\n');
    await run(['users', 'add', 'bob'], 'another good one\n');
    const r = await run(['users', 'list']);
    expect(r.code).toBe(0);
    const [header, ...rows] = r.out[0].split('\n');
    expect(header).toMatch(/^USER ID\s+USERNAME\s+ROLE\s+CLIENTS\s+STATE\s+CREATED$/);
    expect(rows.map((l) => l.split(/\s+/).slice(0, 3).join(' '))).toEqual([
      expect.stringMatching(/^U\d{4}A00001 alice admin$/),
      expect.stringMatching(/^U\d{4}A00002 bob member$/),
    ]);
  });

  it('refuses a short password, a bad name and a duplicate, with exit code 1', async () => {
    expect(await run(['users', 'add', 'alice'], 'short\n')).toEqual({ code: 1, out: [], err: ['bictl: password must be at least 8 characters'] });
    expect((await run(['users', 'add', 'al ice'], 'long enough pw\n')).err[0]).toMatch(/^bictl: username must be 1 to 64 characters/);
    await run(['users', 'add', 'alice'], 'long enough pw\n');
    expect(await run(['users', 'add', 'ALICE'], 'long enough pw\n')).toEqual({ code: 1, out: [], err: ['bictl: User ALICE already exists'] });
  });

  it('grant, revoke-grant, disable, enable and set-role change what list shows; the last admin stays', async () => {
    await run(['users', 'add', 'alice', '--admin'], 'correct horse battery\n');
    await run(['users', 'add', 'bob'], 'another good one\n');
    const rows = async () => (await run(['users', 'list'])).out[0].split('\n').slice(1).map((l) => l.split(/\s+/).slice(1, 5).join(' '));
    expect(await run(['users', 'grant', 'bob', 'acme', 'GLOBEX', '--allow-unknown'])).toEqual({ code: 0, out: [], err: [] });
    expect(await rows()).toEqual(['alice admin - enabled', 'bob member ACME,GLOBEX enabled']);
    await run(['users', 'revoke-grant', 'bob', 'GLOBEX']);
    await run(['users', 'disable', 'bob']);
    expect(await rows()).toEqual(['alice admin - enabled', 'bob member ACME disabled']);
    await run(['users', 'enable', 'bob']);
    await run(['users', 'set-role', 'bob', 'admin']);
    expect(await rows()).toEqual(['alice admin - enabled', 'bob admin ACME enabled']);
    expect(await run(['users', 'disable', 'alice'])).toEqual({ code: 0, out: [], err: [] });
    // bob is now the last enabled admin.
    expect(await run(['users', 'set-role', 'bob', 'member'])).toEqual({ code: 1, out: [], err: ['bictl: The last admin cannot be demoted or disabled'] });
    expect(await run(['users', 'disable', 'bob'])).toEqual({ code: 1, out: [], err: ['bictl: The last admin cannot be demoted or disabled'] });
    expect(await run(['users', 'grant', 'nobody', 'ACME'])).toEqual({ code: 1, out: [], err: ['bictl: no user named nobody'] });
    expect(await run(['users', 'grant', 'bob', 'a b'])).toEqual({ code: 1, out: [], err: ['bictl: client/0 must be 1 to 64 letters, digits, "_" or "-"'] });
    expect(await run(['users', 'set-role', 'bob', 'owner'])).toEqual({ code: 1, out: [], err: ['bictl: role must be admin or member'] });
  }, 90_000); // about a dozen CLI processes, each opening the store: slow on a loaded machine

  it('grant refuses a client that does not exist (a typo), unless --allow-unknown', async () => {
    await run(['users', 'add', 'bob'], 'another good one\n');
    const store = openStore(db);
    store.prepare("INSERT INTO clients (client_id, client_name, status, onboarded_date, last_modified_date) VALUES ('ACME', 'Acme', 'ACTIVE', '2026-01-01', '2026-01-01')").run();
    store.close();
    expect(await run(['users', 'grant', 'bob', 'ACME', 'NOPE'])).toEqual({
      code: 1,
      out: [],
      err: ['bictl: no client NOPE (a typo? bictl status --kind Client lists them; --allow-unknown grants ahead of onboarding)'],
    });
    expect(await run(['users', 'grant', 'bob', 'acme'])).toEqual({ code: 0, out: [], err: [] });
    expect((await run(['users', 'list'])).out[0]).toMatch(/bob\s+member\s+ACME\s/);
  });

  it('users commands work on a store kept from another source (a git-mode store, run without the git variables)', async () => {
    await run(['users', 'add', 'alice', '--admin'], 'correct horse battery\n');
    const store = openStore(db);
    store.prepare('DELETE FROM store_source').run();
    store.prepare("INSERT INTO store_source (id, kind, location, branch, path, recorded_at) VALUES (1, 'git', 'file:///srv/repo.git', 'main', '', '2026-01-01')").run();
    store.close();
    const r = await run(['users', 'list']);
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/alice\s+admin/);
    // Commands that do touch manifests still refuse (naming --adopt-source as the deliberate way out).
    expect((await run(['status'])).err[0]).toMatch(/kept from git/);
  });
});
