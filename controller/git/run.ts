import { spawn } from 'node:child_process';

export interface RunGitOptions {
  cwd: string;
  env: Record<string, string>;
  /** Longest the process may stay silent (no output) before it is killed. */
  silenceMs: number;
  /** Kills the process when aborted. */
  signal?: AbortSignal;
  /** Written to the process's stdin (then closed). */
  input?: Buffer | string;
}

/** A git command that failed: its exit code and what it printed. */
export class GitCommandError extends Error {
  readonly code: number | null;
  constructor(args: string[], code: number | null, output: string) {
    super(output || `git ${args[0] ?? ''} exited with ${code ?? 'a signal'}`);
    this.name = 'GitCommandError';
    this.code = code;
  }
}

/**
 * Runs `git args` and resolves to its stdout; rejects with its stderr and stdout when it exits
 * non-zero, is silent for longer than `silenceMs`, or is aborted. Spawned directly: a wrapper
 * library's completion heuristics cost up to 50 ms per command that prints nothing.
 */
export async function runGit(args: string[], opts: RunGitOptions): Promise<string> {
  return (await runGitBytes(args, opts)).toString('utf8');
}

/** runGit, resolving to the bytes git printed (objects, not text). */
export function runGitBytes(args: string[], opts: RunGitOptions): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    if (opts.signal?.aborted) {
      reject(new GitCommandError(args, null, 'git: aborted (the clone is shutting down)'));
      return;
    }
    // Its own process group, so a kill reaches the helpers git starts too (git-remote-https, ssh),
    // which would otherwise keep the pipes open and the command unsettled.
    const child = spawn('git', args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let why: string | undefined;
    let settled = false;
    const fail = (output: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      reject(new GitCommandError(args, child.exitCode, output));
    };
    const kill = (reason: string) => {
      why ??= reason;
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
      // Settled now: a helper that survived could hold the pipes open for long.
      fail(reason);
    };
    let timer = setTimeout(() => kill(`git ${args[0]}: no output for ${opts.silenceMs} ms, killed`), opts.silenceMs);
    const heard = () => {
      clearTimeout(timer);
      timer = setTimeout(() => kill(`git ${args[0]}: no output for ${opts.silenceMs} ms, killed`), opts.silenceMs);
    };
    const onAbort = () => kill('git: aborted (the clone is shutting down)');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (c: Buffer) => {
      out.push(c);
      heard();
    });
    child.stderr.on('data', (c: Buffer) => {
      err.push(c);
      heard();
    });
    // A write error on stdin (git exited early) is reported by the exit below.
    child.stdin.on('error', () => {});
    // Could not be started (no git on PATH): there may be no 'close' to wait for.
    child.on('error', (e) => fail(`git: ${e.message}`));
    child.on('close', (code) => {
      const stdout = Buffer.concat(out);
      if (code === 0 && !why && !settled) {
        settled = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        resolve(stdout);
        return;
      }
      const stderr = Buffer.concat(err).toString('utf8').trim();
      fail([why, stderr, stdout.toString('utf8').trim()].filter(Boolean).join('\n'));
    });
    child.stdin.end(opts.input ?? '');
  });
}
