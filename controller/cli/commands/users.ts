import type { ReadStream } from 'node:tty';
import { UserStore, checkClientIds, type User } from '../../auth/users.ts';
import { table, type CliIO } from '../io.ts';
import type { CommandContext } from '../context.ts';
import { withRuntime } from './oneshot.ts';
import { readClient } from '../../kinds/client/registry.ts';
import type { Runtime } from '../../runtime.ts';

/** Who the audit log names for a local command: the operating-system user who ran it. */
const CLI_ACTOR = `cli:${process.env.USER ?? process.env.LOGNAME ?? 'unknown'}`;

/** Reads everything piped in and keeps the first line (so `echo pw | bictl users add` works). */
async function readPiped(stdin: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0];
}

/** Prompts on the terminal without echoing what is typed. */
function promptHidden(io: CliIO, tty: ReadStream, prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let value = '';
    const done = (err?: Error) => {
      tty.setRawMode(false);
      tty.pause();
      tty.off('data', onData);
      io.err('');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (buf: Buffer) => {
      for (const ch of buf.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003' || ch === '\u0004') return done(new Error('cancelled'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    process.stderr.write(prompt);
    tty.setRawMode(true);
    tty.resume();
    tty.on('data', onData);
  });
}

async function readPassword(io: CliIO): Promise<string> {
  const tty = io.stdin as Partial<ReadStream>;
  if (tty.isTTY && typeof tty.setRawMode === 'function') {
    const first = await promptHidden(io, tty as ReadStream, 'Password: ');
    const again = await promptHidden(io, tty as ReadStream, 'Repeat password: ');
    if (first !== again) throw new Error('passwords do not match');
    return first;
  }
  return readPiped(io.stdin);
}

export function registerUsers(ctx: CommandContext): void {
  const users = ctx.program.command('users').description('manage users who log in to the API and the settings UI');

  users
    .command('add <username>')
    .description('create a user; the password is read from stdin (piped) or prompted for; prints the userId')
    .option('--admin', 'give the user the admin role (default: member)')
    .action(async (username: string, opts: { admin?: boolean }) => {
      const password = await readPassword(ctx.io);
      await withRuntime(
        ctx,
        async (rt) => {
          const user = await new UserStore({ db: rt.db, clock: rt.clock }).create({ username, password, role: opts.admin ? 'admin' : 'member', by: CLI_ACTOR });
          ctx.io.out(user.userId);
        },
        { anySource: true },
      );
    });

  users
    .command('list')
    .description('list users (ID, name, role, granted clients, state)')
    .action(async () => {
      await withRuntime(ctx, async (rt) => {
        const rows = new UserStore({ db: rt.db, clock: rt.clock })
          .views()
          .map((u) => [u.userId, u.username, u.role, u.clients.join(',') || '-', u.disabled ? 'disabled' : 'enabled', u.createdAt]);
        ctx.io.out(table(['USER ID', 'USERNAME', 'ROLE', 'CLIENTS', 'STATE', 'CREATED'], rows));
      }, { anySource: true });
    });

  /** Runs `fn` on the named user's store entry; an unknown user is an error. */
  const onUser = (username: string, fn: (store: UserStore, user: User, rt: Runtime) => void) =>
    withRuntime(
      ctx,
      async (rt) => {
        const store = new UserStore({ db: rt.db, clock: rt.clock });
        const user = store.findByName(username);
        if (!user) throw new Error(`no user named ${username}`);
        fn(store, user, rt);
      },
      { anySource: true },
    );
  const clientIds = (ids: string[]): string[] => {
    const upper = ids.map((c) => c.trim().toUpperCase());
    const problems = checkClientIds(upper, 'client');
    if (problems.length) throw new Error(problems.map((p) => p.message).join('; '));
    return upper;
  };

  users
    .command('grant <username> <clientIds...>')
    .description('let a member see and act for these clients (their keys must be scoped to one of them)')
    .option('--allow-unknown', 'grant clients that are not onboarded yet')
    .action((username: string, ids: string[], opts: { allowUnknown?: boolean }) =>
      onUser(username, (store, u, rt) => {
        const granted = clientIds(ids);
        const unknown = opts.allowUnknown ? [] : granted.filter((id) => !readClient(rt.db, id));
        if (unknown.length) throw new Error(`no client ${unknown.join(', ')} (a typo? bictl status --kind Client lists them; --allow-unknown grants ahead of onboarding)`);
        store.grant(u.userId, granted, CLI_ACTOR);
      }),
    );

  users
    .command('revoke-grant <username> <clientIds...>')
    .description('take clients away from a member (their keys for them stop working at once)')
    .action((username: string, ids: string[]) => onUser(username, (store, u) => store.revokeGrant(u.userId, clientIds(ids), CLI_ACTOR)));

  users
    .command('disable <username>')
    .description('disable a user: their sessions and keys stop working at once (not the last admin)')
    .action((username: string) => onUser(username, (store, u) => store.update(u.userId, { disabled: true }, CLI_ACTOR)));

  users
    .command('enable <username>')
    .description('enable a disabled user again')
    .action((username: string) => onUser(username, (store, u) => store.update(u.userId, { disabled: false }, CLI_ACTOR)));

  users
    .command('set-role <username> <role>')
    .description('set the role: admin or member (the last admin cannot be demoted)')
    .action((username: string, role: string) => {
      if (role !== 'admin' && role !== 'member') throw new Error('role must be admin or member');
      return onUser(username, (store, u) => store.update(u.userId, { role }, CLI_ACTOR));
    });
}
