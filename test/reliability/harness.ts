import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join, relative, sep } from 'node:path';
import Database from 'better-sqlite3';
import { it, type TestContext } from 'vitest';
import { request, routeExists } from '../../bench/lib/api-client.ts';
import { startBenchServer, type BenchServer, type Mode } from '../../bench/lib/setup.ts';

/** What the suite prints at the end: scenarios run, fuzz cases tried, writes lost in crashes. */
export const tally = {
  scenarios: [] as { name: string; state: 'passed' | 'failed' | 'skipped'; note?: string }[],
  fuzzCases: 0,
  lostWrites: 0,
};

export interface ScenarioContext {
  /** Skips the scenario honestly (counted in the total, not as passed). */
  skip(reason: string): never;
  test: TestContext;
}

/** One reliability scenario = one test; its outcome goes into the tally. */
export function scenario(name: string, fn: (s: ScenarioContext) => Promise<void>, timeoutMs = 180_000): void {
  it(
    name,
    async (test) => {
      const entry: (typeof tally.scenarios)[number] = { name, state: 'failed' };
      tally.scenarios.push(entry);
      try {
        await fn({
          test,
          skip: (reason: string) => {
            entry.state = 'skipped';
            entry.note = reason;
            return test.skip(reason);
          },
        });
        entry.state = 'passed';
      } catch (err) {
        if (entry.state !== 'skipped') entry.state = 'failed';
        throw err;
      }
    },
    timeoutMs,
  );
}

export function summaryLine(): string {
  const passed = tally.scenarios.filter((s) => s.state === 'passed').length;
  return `reliability: ${passed}/${tally.scenarios.length} scenarios, ${tally.fuzzCases} fuzz cases, ${tally.lostWrites} lost writes`;
}

/** A server process for a scenario, with the prerequisites, an admin session and an API key. */
export async function startServer(prefix: string, opts: { mode?: Mode; env?: Record<string, string>; files?: Record<string, string> } = {}): Promise<BenchServer> {
  return startBenchServer({ prefix: `rel-${prefix}`, mode: opts.mode, files: opts.files, server: { env: opts.env } });
}

/** Skips unless `method path` exists in this build (the issue that adds it may not be merged yet). */
export async function requireRoute(s: ScenarioContext, ctx: BenchServer, method: string, path: string, headers: Record<string, string>, issue: string): Promise<void> {
  if (!(await routeExists(ctx.server.url, method, path, headers))) {
    s.skip(`${method} ${path} is not in this build (${issue} not merged)`);
  }
}

/** Tables that hold desired resources; `manifests` (status) and auth bookkeeping are separate. */
export const RESOURCE_TABLES = ['core_models', 'connections', 'semantic_models', 'vdms', 'facades', 'experiments', 'clients', 'pipelines', 'pipeline_steps', 'id_sequences', 'counters', 'users'];

/**
 * A dump of the store's tables as text, for before/after comparison. `clients` rows with
 * status FAILED are audit entries (rewritten on every retry) and left out.
 */
export function dumpStore(dbPath: string, tables: string[] = RESOURCE_TABLES): Record<string, string[]> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const have = new Set((db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map((r) => r.name));
    const out: Record<string, string[]> = {};
    for (const t of tables) {
      if (!have.has(t)) continue;
      const where = t === 'clients' ? ` WHERE status != 'FAILED'` : '';
      out[t] = (db.prepare(`SELECT * FROM ${t}${where}`).all() as Record<string, unknown>[]).map((r) => JSON.stringify(r)).sort();
    }
    return out;
  } finally {
    db.close();
  }
}

export function queryStore<T>(dbPath: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** Every file under `root` (dot-files included) → sha256 of its bytes. */
export function dumpFolder(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(root)) return out;
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const abs = join(dir, name);
      if (statSync(abs).isDirectory()) walk(abs);
      else out[relative(root, abs).split(sep).join('/')] = createHash('sha256').update(readFileSync(abs)).digest('hex');
    }
  };
  walk(root);
  return out;
}

/** Asserts an error answer is a JSON object carrying an error text; returns the text. */
export function errorText(res: { status: number; json: unknown; text: string }): string | undefined {
  const j = res.json as Record<string, unknown> | undefined;
  if (!j || typeof j !== 'object') return undefined;
  const e = j.error ?? j.message;
  return typeof e === 'string' && e.length > 0 ? e : undefined;
}

export { request };

/** Polls until `check` is truthy or throws after `timeoutMs`. */
export async function until<T>(check: () => T | Promise<T>, timeoutMs: number, what: string): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * POSTs `size` bytes over a raw socket and reads the answer even when the server answers early
 * and closes (a 413 before the body is in): an HTTP client would report that as EPIPE.
 */
export function postLarge(url: string, size: number, headers: Record<string, string>): Promise<{ status: number; json: unknown; text: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const socket = connect({ host: u.hostname, port: Number(u.port) });
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => {
      /* EPIPE / ECONNRESET once the server has answered and closed */
    });
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8').replace(/^(HTTP\/1\.1 100[^\r]*\r\n(?:[^\r]+\r\n)*\r\n)+/, '');
      const m = /^HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(raw);
      if (!m) return reject(new Error(`no HTTP answer: ${raw.slice(0, 200)}`));
      const text = m[3];
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ status: Number(m[1]), json, text });
    });
    socket.on('connect', () => {
      const head = [`POST ${u.pathname} HTTP/1.1`, `host: ${u.host}`, 'content-type: application/json', `content-length: ${size}`, 'expect: 100-continue', 'connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 'x');
      chunk.write('{"name":"');
      let sent = 0;
      const finalAnswer = () => /HTTP\/1\.1 (?!100)\d{3}/.test(Buffer.concat(chunks).toString('latin1'));
      const pump = () => {
        while (sent < size && !socket.destroyed && !finalAnswer()) {
          const n = Math.min(chunk.length, size - sent);
          sent += n;
          if (!socket.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void socket.once('drain', pump);
        }
      };
      // A server that refuses on Content-Length answers before the body (as curl sees it);
      // sending the body into a closed socket would make the kernel drop that answer (RST).
      setTimeout(pump, 300);
    });
  });
}
