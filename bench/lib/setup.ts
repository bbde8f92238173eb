import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { bearer, createApiKey, login, type Session } from './api-client.ts';
import { createSeededBareRepo } from './git.ts';
import { prerequisiteFiles } from './payloads.ts';
import { ServerProcess, type ServerProcessOptions } from './server-process.ts';

export type Mode = 'directory' | 'git';

export interface BenchServer {
  server: ServerProcess;
  dir: string;
  mode: Mode;
  /** The bare repository in git mode. */
  bare?: string;
  session: Session;
  apiKey: string;
  keyId: string;
  /** Headers for A endpoints. */
  keyHeaders: Record<string, string>;
  /** Stops the server and removes its folder (unless `keep`). */
  close(opts?: { keep?: boolean }): Promise<void>;
}

/** A fresh scratch folder (under `base`, default the OS temp dir). */
export function scratch(prefix: string, base?: string): string {
  if (base) mkdirSync(base, { recursive: true });
  return mkdtempSync(join(base ?? tmpdir(), `${prefix}-`));
}

export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
}

/**
 * A server process with the prerequisites (a CoreModel and a Connection) in its manifests
 * folder or git repository, ready, with an admin session and an API key.
 */
export async function startBenchServer(opts: {
  prefix: string;
  mode?: Mode;
  base?: string;
  files?: Record<string, string>;
  server?: Partial<ServerProcessOptions>;
}): Promise<BenchServer> {
  const mode = opts.mode ?? 'directory';
  const dir = scratch(opts.prefix, opts.base);
  const files = { ...prerequisiteFiles(), ...opts.files };
  let bare: string | undefined;
  const serverOpts: ServerProcessOptions = { dir, ...opts.server };
  if (mode === 'git') {
    const repo = createSeededBareRepo(join(dir, 'git'), files);
    bare = repo.bare;
    serverOpts.gitUrl = repo.url;
  } else {
    writeFiles(join(dir, 'manifests'), files);
  }
  const server = new ServerProcess(serverOpts);
  try {
    await server.start();
    await server.waitReady();
    if (mode === 'git') assertPrerequisitesRead(server.opts.dbPath);
    const session = await login(server.url, server.opts.adminUser, server.opts.adminPassword);
    const key = await createApiKey(server.url, session);
    return {
      server,
      dir,
      mode,
      bare,
      session,
      apiKey: key.apiKey,
      keyId: key.keyId,
      keyHeaders: bearer(key.apiKey),
      close: async (o = {}) => {
        await server.stop();
        if (!o.keep) rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/** In git mode the prerequisites come only from the seeded repository: were they read? */
function assertPrerequisitesRead(dbPath: string): void {
  const db = new Database(dbPath, { readonly: true });
  try {
    const row = db.prepare(`SELECT phase FROM manifests WHERE kind = 'Connection'`).get() as { phase: string } | undefined;
    if (row?.phase !== 'Synced') throw new Error('git mode is not in this build: the seeded repository was not read (issue 7 not merged)');
  } finally {
    db.close();
  }
}
