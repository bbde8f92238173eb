import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DirectorySyncs, fsyncDirectory } from '../../../controller/writers/dir-sync.ts';
import { DirectoryWriter } from '../../../controller/writers/directory.ts';

/** An fsync the test finishes by hand, recording each one as it starts. */
function manualFsync() {
  const started: { dir: string; done: () => void; fail: (e: Error) => void }[] = [];
  const fsync = (dir: string) =>
    new Promise<void>((resolve, reject) => {
      started.push({ dir, done: resolve, fail: reject });
    });
  return { started, fsync };
}

const settled = () => new Promise((r) => setImmediate(r));

describe('DirectorySyncs (group commit of directory entries)', () => {
  it('one caller: one fsync of its folder', async () => {
    const m = manualFsync();
    const syncs = new DirectorySyncs({ fsync: m.fsync });
    let done = false;
    const p = syncs.sync('/a').then(() => (done = true));
    expect(m.started.map((s) => s.dir)).toEqual(['/a']);
    await settled();
    expect(done).toBe(false);
    m.started[0].done();
    await p;
    expect(done).toBe(true);
  });

  it('callers arriving while an fsync runs share the next one, which starts after they asked', async () => {
    const m = manualFsync();
    const syncs = new DirectorySyncs({ fsync: m.fsync });
    const first = syncs.sync('/a');
    const resolved: number[] = [];
    const later = [1, 2, 3, 4, 5].map((i) => syncs.sync('/a').then(() => resolved.push(i)));
    m.started[0].done();
    await first;
    await settled();
    // The first fsync may have begun before their renames: they are not answered by it.
    expect(resolved).toEqual([]);
    expect(m.started).toHaveLength(2);
    m.started[1].done();
    await Promise.all(later);
    expect(resolved).toEqual([1, 2, 3, 4, 5]);
    expect(m.started).toHaveLength(2);
  });

  it('folders are synced apart; a failed fsync fails its callers only', async () => {
    const m = manualFsync();
    const syncs = new DirectorySyncs({ fsync: m.fsync });
    const a = syncs.sync('/a');
    const b = syncs.sync('/b');
    expect(m.started.map((s) => s.dir)).toEqual(['/a', '/b']);
    m.started[0].fail(new Error('EIO'));
    m.started[1].done();
    await expect(a).rejects.toThrow('EIO');
    await expect(b).resolves.toBeUndefined();
    // The next caller of /a gets a fresh fsync.
    const again = syncs.sync('/a');
    expect(m.started).toHaveLength(3);
    m.started[2].done();
    await expect(again).resolves.toBeUndefined();
  });
});

describe('DirectoryWriter durability', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('acknowledges a write once its folder is fsynced, and every folder it created on the way', async () => {
    dir = mkdtempSync(join(tmpdir(), 'bi-dirsync-'));
    const synced: string[] = [];
    const writer = new DirectoryWriter({ root: dir, syncs: new DirectorySyncs({ fsync: async (d) => void synced.push(d) }) });
    await writer.write('dashboards/deep/a.yaml', 'x: 1\n');
    expect(readFileSync(join(dir, 'dashboards', 'deep', 'a.yaml'), 'utf8')).toBe('x: 1\n');
    expect(synced.sort()).toEqual([dir, join(dir, 'dashboards'), join(dir, 'dashboards', 'deep')]);
    synced.length = 0;
    await writer.write('dashboards/deep/b.yaml', 'x: 2\n');
    expect(synced).toEqual([join(dir, 'dashboards', 'deep')]);
  });

  it('fsyncs a real directory', async () => {
    dir = mkdtempSync(join(tmpdir(), 'bi-dirsync-'));
    await expect(fsyncDirectory(dir)).resolves.toBeUndefined();
    await expect(fsyncDirectory(join(dir, 'absent'))).rejects.toThrow(/ENOENT/);
  });
});
