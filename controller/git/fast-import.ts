import { formatIdentity, type GitIdentity } from './identity.ts';

/** One commit of a batch: a whole file written (`content`) or removed (`content: null`). */
export interface ImportCommit {
  author: GitIdentity;
  message: string;
  /** Repository-relative path. */
  path: string;
  content: string | null;
}

/** The arguments of `git fast-import` for importStream: quiet, dates "now", the private ref forced. */
export const FAST_IMPORT_ARGS = ['fast-import', '--quiet', '--force', '--date-format=now', '--done'];

/** The last commit's id from what fast-import printed for importStream's `get-mark`. */
export function importedTip(stdout: string): string {
  const sha = stdout.trim().split('\n').pop() ?? '';
  if (!/^[0-9a-f]{40,64}$/.test(sha)) throw new Error(`git fast-import answered no commit id: ${stdout.slice(0, 200)}`);
  return sha;
}

/**
 * The fast-import stream building `commits` on `ref` on top of `base` (null: a root commit), one
 * commit each, in order, without an index or a working tree; then the last one's id is asked
 * for (`get-mark`). `ref` is a private staging ref (fast-import moves it, forced).
 */
export function importStream(commits: ImportCommit[], ref: string, base: string | null, committer: GitIdentity): Buffer {
  const parts: Buffer[] = [];
  const line = (text: string) => parts.push(Buffer.from(`${text}\n`, 'utf8'));
  const data = (text: string) => {
    const bytes = Buffer.from(text, 'utf8');
    line(`data ${bytes.length}`);
    parts.push(bytes, Buffer.from('\n'));
  };
  // No base: the first commit is a root commit, whatever the ref held before.
  if (!base) line(`reset ${ref}`);
  commits.forEach((c, i) => {
    line(`commit ${ref}`);
    line(`mark :${i + 1}`);
    line(`author ${formatIdentity(c.author)} now`);
    line(`committer ${formatIdentity(committer)} now`);
    // As `git commit -m` stores it: ending in a newline.
    data(`${c.message}\n`);
    // Each commit after the first continues the ref from the previous one.
    if (i === 0 && base) line(`from ${base}`);
    if (c.content === null) line(`D ${quotePath(c.path)}`);
    else {
      line(`M 100644 inline ${quotePath(c.path)}`);
      data(c.content);
    }
  });
  line(`get-mark :${commits.length}`);
  line('done');
  return Buffer.concat(parts);
}

/** A path as fast-import reads it: C-style quoted, so spaces, quotes and newlines are safe. */
export function quotePath(path: string): string {
  // eslint-disable-next-line no-control-regex
  return `"${path.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[\u0000-\u001f\u007f]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`)}"`;
}
