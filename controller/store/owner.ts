import { closeSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Who owns a store: the one process that reconciles into it. `bictl serve` claims its data folder
 * for as long as it runs, `bictl sync` for as long as it syncs; another writer finds the claim and
 * goes through the owner (its control socket) or refuses. A claim whose process is gone (killed,
 * crashed) is stale and taken over.
 */
export interface StoreOwner {
  pid: number;
  /** `serve` or the one-shot command holding the store. */
  role: 'serve' | 'sync';
  /** The process's start time (Linux: clock ticks since boot), so a reused pid is not mistaken for the owner. */
  started?: string;
  /** The API's URL, once listening. */
  url?: string;
  /** The control socket (a unix socket in the data folder) through which local commands go. */
  socket?: string;
  at: string;
}

export const OWNER_FILE = 'owner.json';
export const CONTROL_SOCKET = 'control.sock';

const ownerPath = (dataDir: string) => join(dataDir, OWNER_FILE);

/** The text every writer refuses with while another process owns the store. */
export function ownedMessage(owner: Pick<StoreOwner, 'pid' | 'role'>, what: string): string {
  return owner.role === 'serve' ? `a server (pid ${owner.pid}) owns this store: ${what}` : `bictl sync (pid ${owner.pid}) owns this store: ${what}`;
}

/** The start time of process `pid` (field 22 of /proc/<pid>/stat); undefined off Linux or when gone. */
export function processStarted(pid: number): string | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return fields[19];
  } catch {
    return undefined;
  }
}

/** Whether process `pid` runs (and is the one that wrote the claim, when its start time was recorded). */
export function isAlive(pid: number, started?: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (started === undefined) return true;
  const now = processStarted(pid);
  return now === undefined || now === started;
}

function readClaim(dataDir: string): StoreOwner | undefined {
  try {
    const o = JSON.parse(readFileSync(ownerPath(dataDir), 'utf8')) as StoreOwner;
    return typeof o.pid === 'number' && Number.isInteger(o.pid) && o.pid > 0 ? o : undefined;
  } catch {
    return undefined;
  }
}

/** The live owner of the store in `dataDir`, if any (a stale claim reads as none). */
export function storeOwner(dataDir: string): StoreOwner | undefined {
  const o = readClaim(dataDir);
  return o && isAlive(o.pid, o.started) ? o : undefined;
}

/** A live process other than this one owns the store. */
export class StoreOwnedError extends Error {
  readonly owner: StoreOwner;
  constructor(owner: StoreOwner, what: string) {
    super(ownedMessage(owner, what));
    this.name = 'StoreOwnedError';
    this.owner = owner;
  }
}

/**
 * Claims the store in `dataDir` for this process (created exclusively: of two racing claims
 * one wins). Throws StoreOwnedError when a live process holds it; a stale claim is replaced.
 */
export function claimStore(dataDir: string, role: StoreOwner['role'], refusal: (owner: StoreOwner) => string): StoreOwner {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 }); // owner only, like openStore's (it may come first)
  const mine: StoreOwner = { pid: process.pid, role, started: processStarted(process.pid), at: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(ownerPath(dataDir), 'wx', 0o600);
      try {
        writeSync(fd, JSON.stringify(mine));
      } finally {
        closeSync(fd);
      }
      return mine;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const held = readClaim(dataDir);
    if (held && isAlive(held.pid, held.started)) throw new StoreOwnedError(held, refusal(held));
    // Stale (its process is gone) or unreadable: taken over.
    try {
      unlinkSync(ownerPath(dataDir));
    } catch {
      /* another claimant removed it first */
    }
  }
  const held = readClaim(dataDir);
  if (held) throw new StoreOwnedError(held, refusal(held));
  throw new Error(`cannot claim the store in ${dataDir}`);
}

/** Adds what others need to reach the owner (URL, socket) to this process's claim. */
export function updateClaim(dataDir: string, patch: Partial<Pick<StoreOwner, 'url' | 'socket'>>): void {
  const held = readClaim(dataDir);
  if (!held || held.pid !== process.pid) return;
  const tmp = `${ownerPath(dataDir)}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, JSON.stringify({ ...held, ...patch }));
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, ownerPath(dataDir));
}

/** Gives the store up (only this process's own claim is removed). */
export function releaseStore(dataDir: string): void {
  const held = readClaim(dataDir);
  if (!held || held.pid !== process.pid) return;
  try {
    unlinkSync(ownerPath(dataDir));
  } catch {
    /* already gone */
  }
}
