import { sha256 } from '../hash.ts';
import type { ManifestWriter } from '../types.ts';

/** A source that can be told what the API wrote (see DirectorySource.noteOwnWrite). */
export interface OwnWriteNotes {
  noteOwnWrite(path: string, hash: string): void;
}

/**
 * `writer`, telling `source` the path and content hash of every write before making it: the
 * watcher's event for that write then costs no reconcile (the API reconciles what it wrote).
 */
export function notingOwnWrites(writer: ManifestWriter, source: OwnWriteNotes): ManifestWriter {
  return {
    write(relPath, content, opts) {
      source.noteOwnWrite(relPath, sha256(content));
      return writer.write(relPath, content, opts);
    },
    remove: (relPath, opts) => writer.remove(relPath, opts),
    exists: (relPath) => writer.exists(relPath),
    ...(writer.caseTwin ? { caseTwin: (relPath: string) => writer.caseTwin?.(relPath) ?? Promise.resolve(undefined) } : {}),
  };
}
