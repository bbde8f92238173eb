import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { stringify } from 'yaml';
import { loadConfig } from '../../../controller/config.ts';
import { createLogger } from '../../../controller/log.ts';
import { createRuntime, type Runtime } from '../../../controller/runtime.ts';
import type { GitSource } from '../../../controller/sources/git.ts';
import { FakeClock, ManualScheduler } from '../../helpers/clock.ts';
import { testSchemas } from '../../helpers/runtime.ts';

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_DATE: '2026-03-01T10:00:00Z',
  GIT_COMMITTER_DATE: '2026-03-01T10:00:00Z',
};

/** Runs git synchronously (test fixtures only: bounded, local repositories). */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
    env: GIT_ENV,
    encoding: 'utf8',
    timeout: 30_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

export function manifest(kind: string, name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'bi.controller/v1', kind, metadata: { name }, spec };
}

export const coreModel = (name: string, title = name) => manifest('CoreModel', name, { name: title, definition: { columns: ['region'] } });
export const connection = (name: string, title = name) =>
  manifest('Connection', name, { name: title, vendor: 'SNOWFLAKE', accountUrl: 'https://acme.snowflakecomputing.com', passwordEnv: 'BI_CONN_PW' });

/** A bare "remote" and a second clone a human pushes from. */
export class Remote {
  readonly root: string;
  readonly bare: string;
  readonly url: string;
  readonly work: string;

  constructor(root = mkdtempSync(join(tmpdir(), 'bi-git-'))) {
    this.root = root;
    this.bare = join(root, 'remote.git');
    this.url = `file://${this.bare}`;
    this.work = join(root, 'human');
  }

  /** Creates the bare repository and the human's clone. */
  init(): this {
    mkdirSync(this.bare, { recursive: true });
    git(this.bare, 'init', '--quiet', '--bare', '--initial-branch=main');
    git(this.root, 'clone', '--quiet', this.url, 'human');
    git(this.work, 'checkout', '--quiet', '-B', 'main');
    return this;
  }

  write(relPath: string, content: unknown): this {
    const abs = join(this.work, relPath);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, typeof content === 'string' ? content : stringify(content));
    return this;
  }

  remove(relPath: string): this {
    unlinkSync(join(this.work, relPath));
    return this;
  }

  /** Commits everything as `author` and pushes (pulling first, like a human would). Returns the commit. */
  push(message: string, author = 'Hanna Human <hanna@example.com>'): string {
    git(this.work, 'add', '--all');
    git(this.work, 'commit', '--quiet', `--author=${author}`, '-m', message);
    this.pull();
    git(this.work, 'push', '--quiet', 'origin', 'HEAD:refs/heads/main');
    return this.head();
  }

  /** Brings the human's clone up to date with the remote. */
  pull(): void {
    if (git(this.work, 'ls-remote', '--heads', 'origin', 'main')) git(this.work, 'pull', '--quiet', '--rebase', 'origin', 'main');
  }

  head(): string {
    return git(this.work, 'rev-parse', 'HEAD');
  }

  remoteHead(): string {
    return git(this.bare, 'rev-parse', 'refs/heads/main');
  }

  /** `sha|author name <email>|subject` of the remote branch, newest first. */
  log(): string[] {
    return git(this.bare, 'log', '--format=%H|%an <%ae>|%s', 'main').split('\n').filter(Boolean);
  }

  show(rev: string, path: string): string {
    return git(this.bare, 'show', `${rev}:${path}`);
  }

  files(rev: string): string[] {
    return git(this.bare, 'show', '--name-only', '--format=', rev).split('\n').filter(Boolean);
  }

  /** Makes the remote refuse every push (a pre-receive hook that fails). */
  refusePushes(): void {
    const hook = join(this.bare, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\necho "pushes are frozen" >&2\nexit 1\n', { mode: 0o755 });
  }

  dispose(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** A remote whose first commit (`initial`) holds the warehouse Connection `wh`. */
export function warehouseRemote(): Remote {
  const remote = new Remote().init();
  remote.write('manifests/connections/wh.yaml', connection('wh', 'Warehouse'));
  remote.push('initial');
  return remote;
}

export interface GitTestRuntime {
  rt: Runtime;
  source: GitSource;
  dir: string;
  clock: FakeClock;
  scheduler: ManualScheduler;
  /** Delays the push retries asked for (resolved at once). */
  sleeps: number[];
  logs: string[];
  /** The first sync (resolves once it succeeded). */
  started: Promise<void>;
  /** Fires the poll timer and waits for the sync it starts. */
  poll(): Promise<void>;
  restart(): Promise<GitTestRuntime>;
  stop(): Promise<void>;
}

export interface GitRuntimeOptions {
  url: string;
  dir?: string;
  path?: string;
  webhookSecret?: string;
  /** Do not wait for the first sync. */
  noWait?: boolean;
}

/** A runtime in git mode on a temp data folder, with a fake clock and a manual scheduler. */
export async function makeGitRuntime(opts: GitRuntimeOptions): Promise<GitTestRuntime> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'bi-gitrt-'));
  const clock = new FakeClock();
  const scheduler = new ManualScheduler();
  const sleeps: number[] = [];
  const logs: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      cb();
    },
  });
  const config = loadConfig(
    {
      BI_GIT_URL: opts.url,
      BI_GIT_PATH: opts.path ?? 'manifests',
      BI_GIT_INTERVAL: '30s',
      ...(opts.webhookSecret ? { BI_GIT_WEBHOOK_SECRET: opts.webhookSecret } : {}),
    },
    { manifestsDir: join(dir, 'unused'), dbPath: join(dir, 'data', 'bi.sqlite'), dataDir: join(dir, 'data') },
  );
  const rt = createRuntime({
    config,
    clock: clock.now,
    scheduler: scheduler.schedule,
    random: () => 0,
    schemas: config.strictManifests ? undefined : testSchemas(),
    log: createLogger({ level: 'debug', out }),
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  const source = rt.gitSource;
  if (!source) throw new Error('expected git mode');
  const started = rt.start();
  if (!opts.noWait) await started;
  const t: GitTestRuntime = {
    rt,
    source,
    dir,
    clock,
    scheduler,
    sleeps,
    logs,
    started,
    async poll() {
      scheduler.fireAll();
      await source.whenIdle();
    },
    async restart() {
      await rt.stop();
      return makeGitRuntime({ ...opts, dir });
    },
    async stop() {
      await rt.stop();
    },
  };
  return t;
}
