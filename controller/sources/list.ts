import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isManifestPath } from '../manifest/loader.ts';

/** Every manifest file under `root`, as `/`-separated paths relative to it. Dot-folders are skipped. */
export async function listManifestPaths(root: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string, rel: string): Promise<void> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(join(dir, e.name), r);
      else if (e.isFile() && isManifestPath(r)) out.push(r);
    }
  }
  await walk(root, '');
  return out.sort();
}
