import { realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Config } from '../config.ts';
import { ConflictError } from '../errors.ts';
import { redactUrl } from '../lib/redact-url.ts';
import type { Store } from './db.ts';

/** Where a store's desired state comes from: a folder, or a git URL, branch and folder. */
export type StoreSource = { kind: 'directory'; location: string } | { kind: 'git'; location: string; branch: string; path: string };


/** A path with its symlinks resolved, as far as it exists (a folder not made yet keeps its name). */
function realish(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : resolve(realish(parent), path.slice(parent.length + 1));
  }
}

/** The source a configuration names. */
export function configuredSource(config: Pick<Config, 'git' | 'manifestsDir'>): StoreSource {
  if (config.git) return { kind: 'git', location: redactUrl(config.git.url), branch: config.git.branch, path: config.git.path };
  return { kind: 'directory', location: realish(config.manifestsDir) };
}

export function describeSource(s: StoreSource): string {
  if (s.kind === 'directory') return `the folder ${s.location}`;
  return `git ${s.location} (branch ${s.branch}${s.path ? `, path ${s.path}` : ''})`;
}

const same = (a: StoreSource, b: StoreSource) =>
  a.kind === b.kind && a.location === b.location && (a.kind === 'directory' || (b.kind === 'git' && a.branch === b.branch && a.path === b.path));

/** The store's recorded source; a store synced from git before sources were recorded answers with its git state. */
export function recordedSource(db: Store): StoreSource | undefined {
  const row = db.prepare('SELECT kind, location, branch, path FROM store_source WHERE id = 1').get() as
    | { kind: 'directory' | 'git'; location: string; branch: string | null; path: string | null }
    | undefined;
  if (row) return row.kind === 'git' ? { kind: 'git', location: row.location, branch: row.branch ?? '', path: row.path ?? '' } : { kind: 'directory', location: row.location };
  const git = db.prepare('SELECT url, branch, path FROM git_state ORDER BY synced_at DESC LIMIT 1').get() as { url: string; branch: string; path: string } | undefined;
  return git ? { kind: 'git', location: redactUrl(git.url), branch: git.branch, path: git.path } : undefined;
}

function record(db: Store, s: StoreSource, now: Date): void {
  db.prepare(
    `INSERT INTO store_source (id, kind, location, branch, path, recorded_at) VALUES (1, @kind, @location, @branch, @path, @at)
     ON CONFLICT (id) DO UPDATE SET kind = @kind, location = @location, branch = @branch, path = @path, recorded_at = @at`,
  ).run({ kind: s.kind, location: s.location, branch: s.kind === 'git' ? s.branch : null, path: s.kind === 'git' ? s.path : null, at: now.toISOString() });
}

export const ADOPT_SOURCE_FLAG = '--adopt-source';

/**
 * Refuses to act on a store whose recorded source differs from the configured one (a `bictl
 * sync` run without BI_GIT_URL would mix a folder into a git-mode store and prune the rest),
 * saying which is which. `record` (serve, sync) writes the configured source when none is
 * recorded yet; `adopt` (`--adopt-source`) makes the configured source the store's own.
 */
export function checkStoreSource(db: Store, config: Pick<Config, 'git' | 'manifestsDir' | 'dbPath'>, opts: { record: boolean; adopt?: boolean; now?: Date }): void {
  const configured = configuredSource(config);
  const recorded = recordedSource(db);
  const now = opts.now ?? new Date();
  if (recorded && !same(recorded, configured) && !opts.adopt) {
    throw new ConflictError(
      `the store ${config.dbPath} is kept from ${describeSource(recorded)}, but this command is configured for ${describeSource(configured)}; ` +
        `set BI_MANIFESTS_DIR / BI_GIT_URL, BI_GIT_BRANCH, BI_GIT_PATH to the store's source, or pass ${ADOPT_SOURCE_FLAG} to make the configured source the store's own (objects only in the old source are then pruned)`,
    );
  }
  if ((opts.record || opts.adopt) && (!recorded || !same(recorded, configured) || !db.prepare('SELECT 1 FROM store_source').get())) record(db, configured, now);
}

/**
 * The data directory (store, WAL, secrets, working clone) and the manifests folder must be
 * apart: a reader walking the folder would otherwise open the store, and a store inside it
 * would be listed as manifests.
 */
export function checkDataDirPlacement(config: Pick<Config, 'git' | 'manifestsDir' | 'dataDir'>): void {
  if (config.git) return;
  const data = realish(config.dataDir);
  const root = realish(config.manifestsDir);
  const inside = (a: string, b: string) => a === b || a.startsWith(b.endsWith('/') ? b : `${b}/`);
  if (inside(data, root)) {
    throw new Error(`the data directory ${data} (BI_DB_PATH's folder: store, WAL, secrets) lies inside the manifests folder ${root} (BI_MANIFESTS_DIR); put them apart`);
  }
  if (inside(root, data)) {
    throw new Error(`the manifests folder ${root} (BI_MANIFESTS_DIR) lies inside the data directory ${data} (BI_DB_PATH's folder: store, WAL, secrets); put them apart`);
  }
}
