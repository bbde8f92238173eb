import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A full object id (SHA-1 or SHA-256). */
const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
/** Ref names read from files: `HEAD` and full names under `refs/` without anything git would treat as a revision expression. */
const PLAIN_REF = /^(HEAD|refs\/[A-Za-z0-9._/-]+)$/;

/**
 * The commit id `ref` names, read from the clone's own files (`.git/HEAD`, a loose ref file,
 * `.git/packed-refs`) instead of a `git rev-parse` process: what the files say after a git command
 * that moved the ref has exited. Undefined whenever the files cannot settle it — the ref not
 * found, a symbolic ref other than HEAD's, a `.git` file (a linked worktree), the reftable
 * format, an annotated tag — and the caller asks git.
 */
export function readRefFromFiles(repoDir: string, ref: string): string | undefined {
  if (!PLAIN_REF.test(ref) || ref.includes('..')) return undefined;
  const gitDir = join(repoDir, '.git');
  let name = ref;
  if (ref === 'HEAD') {
    const head = readText(join(gitDir, 'HEAD'));
    if (head === undefined) return undefined;
    if (OBJECT_ID.test(head)) return head;
    const target = /^ref: (refs\/\S+)$/.exec(head)?.[1];
    if (!target || !PLAIN_REF.test(target) || target.includes('..')) return undefined;
    name = target;
  }
  const loose = readText(join(gitDir, name));
  if (loose !== undefined) return OBJECT_ID.test(loose) ? loose : undefined;
  return packedRef(readText(join(gitDir, 'packed-refs')), name);
}

/** `name`'s id in the text of packed-refs; undefined when absent or when it names an annotated tag (a `^` line follows). */
export function packedRef(packed: string | undefined, name: string): string | undefined {
  if (packed === undefined) return undefined;
  const lines = packed.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.length < 42 || line[0] === '#' || line[0] === '^') continue;
    const space = line.indexOf(' ');
    if (line.slice(space + 1) !== name) continue;
    const id = line.slice(0, space);
    if (!OBJECT_ID.test(id) || lines[i + 1]?.startsWith('^')) return undefined;
    return id;
  }
  return undefined;
}

/** The file's text, trimmed; undefined when it is not a readable file. */
function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}
