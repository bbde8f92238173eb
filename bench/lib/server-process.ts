import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BICTL = join(REPO_ROOT, 'controller', 'cli', 'bictl.mjs');

export interface ServerProcessOptions {
  /** Scratch folder of this server: `manifests/` and `data/bi.sqlite` live under it unless told. */
  dir: string;
  manifestsDir?: string;
  dbPath?: string;
  adminUser?: string;
  adminPassword?: string;
  /** Git mode: `file:///…/repo.git`. */
  gitUrl?: string;
  gitInterval?: string;
  logLevel?: string;
  /** More environment (BI_API_KEY_RATE_LIMIT, …). */
  env?: Record<string, string>;
  /** Port to listen on (0 = any free port; a restart passes the old one to keep URLs). */
  port?: number;
}

/**
 * The node flags `npm start` runs the server with (package.json's `start` script), so the bench
 * measures the server as an operator starts it.
 */
export function startNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const m = /\bnode((?:\s+--\S+)*)\s+controller\/cli\/bictl\.mjs serve\b/.exec(pkg.scripts.start);
  if (!m) throw new Error(`package.json's start script does not run controller/cli/bictl.mjs serve: ${pkg.scripts.start}`);
  return m[1].split(/\s+/).filter(Boolean);
}

export const DEFAULT_ADMIN = { username: 'bench-admin', password: 'bench-admin-password-9f3c' } as const;

/**
 * `bictl serve` as a child process, exactly as an operator runs it: environment only,
 * readiness through `/readyz`, the URL from the `listening url=…` log line.
 */
export class ServerProcess {
  readonly opts: Required<Pick<ServerProcessOptions, 'dir' | 'manifestsDir' | 'dbPath' | 'adminUser' | 'adminPassword'>> & ServerProcessOptions;
  #child: ChildProcess | undefined;
  #log = '';
  #exit: Promise<number | null> | undefined;
  #lineWaiters: { re: RegExp; from: number; resolve: (m: RegExpExecArray) => void }[] = [];
  url = '';

  constructor(opts: ServerProcessOptions) {
    this.opts = {
      ...opts,
      manifestsDir: opts.manifestsDir ?? join(opts.dir, 'manifests'),
      dbPath: opts.dbPath ?? join(opts.dir, 'data', 'bi.sqlite'),
      adminUser: opts.adminUser ?? DEFAULT_ADMIN.username,
      adminPassword: opts.adminPassword ?? DEFAULT_ADMIN.password,
    };
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Everything the process printed so far (stdout and stderr). */
  get log(): string {
    return this.#log;
  }

  get running(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Spawns the server and resolves once it listens (not yet ready: see `waitReady`). */
  async start(timeoutMs = 30_000): Promise<string> {
    mkdirSync(this.opts.manifestsDir, { recursive: true });
    mkdirSync(dirname(this.opts.dbPath), { recursive: true });
    // Below info the `listening` line is not printed: pick the port here and poll instead.
    const logsListening = ['info', 'debug', 'trace'].includes(this.opts.logLevel ?? 'info');
    if (!logsListening && !this.opts.port) this.opts.port = await freePort();
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      HOST: '127.0.0.1',
      PORT: String(this.opts.port ?? 0),
      BI_MANIFESTS_DIR: this.opts.manifestsDir,
      BI_DB_PATH: this.opts.dbPath,
      BI_ADMIN_USER: this.opts.adminUser,
      BI_ADMIN_PASSWORD: this.opts.adminPassword,
      BI_LOG_LEVEL: this.opts.logLevel ?? 'info',
      ...(this.opts.gitUrl ? { BI_GIT_URL: this.opts.gitUrl, BI_GIT_INTERVAL: this.opts.gitInterval ?? '2s' } : {}),
      ...this.opts.env,
    };
    // Profiling the server under a bench: BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' (after npm start's flags: a later V8 flag wins).
    const nodeArgs = [...startNodeFlags(), ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)];
    const child = spawn(process.execPath, [...nodeArgs, BICTL, 'serve'], { cwd: this.opts.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    this.#exit = new Promise((res) => child.once('exit', (code) => res(code)));
    const onData = (d: Buffer) => {
      const text = d.toString('utf8');
      this.#log += text;
      if (this.#lineWaiters.length) this.#checkWaiters();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    if (!logsListening) {
      this.url = `http://127.0.0.1:${this.opts.port}`;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (await fetch(`${this.url}/healthz`).then((r) => r.ok, () => false)) return this.url;
        if (!this.running || Date.now() > deadline) throw new Error(`server did not answer /healthz on ${this.url}; log tail:\n${this.#log.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    const m = await this.waitForLog(/listening url=(http:\/\/\S+)/, timeoutMs);
    this.url = m[1];
    this.opts.port = Number(new URL(this.url).port);
    return this.url;
  }

  /** Resolves with the first match of `re` in the log (already printed or still to come). */
  waitForLog(re: RegExp, timeoutMs = 30_000, from = 0): Promise<RegExpExecArray> {
    const found = re.exec(this.#log.slice(from));
    if (found) return Promise.resolve(found);
    return new Promise((resolveMatch, reject) => {
      const timer = setTimeout(() => {
        this.#lineWaiters = this.#lineWaiters.filter((w) => w !== waiter);
        reject(new Error(`server did not log ${re} within ${timeoutMs} ms; log tail:\n${this.#log.slice(-2000)}`));
      }, timeoutMs);
      const waiter = {
        re: new RegExp(re.source, re.flags),
        resolve: (m: RegExpExecArray) => {
          clearTimeout(timer);
          resolveMatch(m);
        },
        from,
      };
      this.#lineWaiters.push(waiter);
      void this.#exit?.then((code) => {
        if (this.#lineWaiters.includes(waiter)) {
          this.#lineWaiters = this.#lineWaiters.filter((w) => w !== waiter);
          clearTimeout(timer);
          reject(new Error(`server exited (${code}) before logging ${re}; log tail:\n${this.#log.slice(-2000)}`));
        }
      });
    });
  }

  #checkWaiters(): void {
    for (const w of [...this.#lineWaiters]) {
      const m = w.re.exec(this.#log.slice(w.from));
      if (m) {
        this.#lineWaiters = this.#lineWaiters.filter((x) => x !== w);
        w.resolve(m);
      }
    }
  }

  /** Polls `/readyz` until 200 (the first full sync is done). */
  async waitReady(timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const res = await fetch(`${this.url}/readyz`);
        if (res.status === 200) return;
      } catch {
        /* not listening yet */
      }
      if (!this.running) throw new Error(`server exited before ready; log tail:\n${this.#log.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`server not ready within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /**
   * CPU time (user + system) the server has used so far, in ms (Linux /proc; undefined elsewhere):
   * of all its threads, or of its main thread alone (the event loop).
   */
  cpuMs(scope: 'all' | 'main' | 'system' | 'children' = 'all'): number | undefined {
    if (!this.pid) return undefined;
    try {
      const path = scope === 'main' ? `/proc/${this.pid}/task/${this.pid}/stat` : `/proc/${this.pid}/stat`;
      // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in ticks of 10 ms;
      // cutime and cstime (the 14th and 15th) those of its ended children (git).
      const fields = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? [];
      if (scope === 'system') return Number(fields[12]) * 10;
      if (scope === 'children') return (Number(fields[13]) + Number(fields[14])) * 10;
      return (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      return undefined;
    }
  }

  /** Peak resident set size of the server so far, in MB (Linux `VmHWM`); undefined elsewhere. */
  peakRssMb(): number | undefined {
    if (!this.pid) return undefined;
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const kb = /VmHWM:\s+(\d+)\s+kB/.exec(status)?.[1];
      return kb ? Number(kb) / 1024 : undefined;
    } catch {
      return undefined;
    }
  }

  /** `kill -9`: no shutdown hooks, no flush — a crash. */
  async kill9(): Promise<void> {
    if (!this.running) return;
    this.#child?.kill('SIGKILL');
    await this.#exit;
  }

  /** SIGTERM and wait for a clean exit; returns the exit code. */
  async stop(timeoutMs = 20_000): Promise<number | null> {
    if (!this.#child) return null;
    if (this.running) this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.#child?.kill('SIGKILL'), timeoutMs);
    const code = await this.#exit;
    clearTimeout(timer);
    return code ?? null;
  }
}

/** A port nobody listens on right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}
