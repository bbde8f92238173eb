import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ValidationError } from '../../../controller/errors.ts';
import { caseTwin, caseTwinSync, folderReads, ownChange } from '../../../controller/writers/case-twin.ts';
import { DirectoryWriter } from '../../../controller/writers/directory.ts';

/**
 * The case-twin check remembers a folder's listing by its modification time (one stat instead of a
 * listing per import) and notes the writer's own writes into it: whatever the order of writes,
 * checks and changes by others, a twin is always found.
 */
describe('case twins with a remembered listing', () => {
  let root: string;
  let writer: DirectoryWriter;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'bi-twin-'));
    writer = new DirectoryWriter({ root });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const refused = (p: Promise<unknown>) => expect(p).rejects.toBeInstanceOf(ValidationError);

  it('finds the twin of a file the writer wrote after the folder was listed', async () => {
    await writer.write('dashboards/a.yaml', 'a: 1\n');
    expect(await caseTwin(root, 'dashboards/B.yaml')).toBeUndefined();
    await writer.write('dashboards/b.yaml', 'b: 1\n');
    expect(await caseTwin(root, 'dashboards/B.yaml')).toBe('dashboards/b.yaml');
    expect(caseTwinSync(root, 'dashboards/A.YAML')).toBe('dashboards/a.yaml');
    await refused(writer.write('dashboards/B.yaml', 'x: 1\n'));
  });

  it('finds the twin of a file someone else created after the folder was listed', async () => {
    await writer.write('dashboards/a.yaml', 'a: 1\n');
    expect(await caseTwin(root, 'dashboards/C.yaml')).toBeUndefined();
    writeFileSync(join(root, 'dashboards', 'c.yaml'), 'c: 1\n');
    expect(await caseTwin(root, 'dashboards/C.yaml')).toBe('dashboards/c.yaml');
  });

  it('finds the twins of writes made at the same time', async () => {
    await writer.write('dashboards/seed.yaml', 's: 1\n');
    const names = Array.from({ length: 12 }, (_, i) => `dashboards/n${i}.yaml`);
    await Promise.all(names.map((n) => writer.write(n, 'v: 1\n')));
    for (const n of names) expect(await caseTwin(root, n.replace('.yaml', '.YAML'))).toBe(n);
  });

  it('forgets a removed file', async () => {
    await writer.write('dashboards/d.yaml', 'd: 1\n');
    expect(await caseTwin(root, 'dashboards/D.yaml')).toBe('dashboards/d.yaml');
    await writer.remove('dashboards/d.yaml');
    expect(await caseTwin(root, 'dashboards/D.yaml')).toBeUndefined();
  });

  it('finds the twin of a file someone else created after writes that overlapped', async () => {
    await writer.write('dashboards/seed.yaml', 's: 1\n');
    expect(await caseTwin(root, 'dashboards/E.yaml')).toBeUndefined();
    // Overlapping writes keep the listing current (each notes the folder's time after its own change)…
    await Promise.all(Array.from({ length: 8 }, (_, i) => writer.write(`dashboards/o${i}.yaml`, 'v: 1\n')));
    expect(await caseTwin(root, 'dashboards/O3.yaml')).toBe('dashboards/o3.yaml');
    // …and a change by someone else after them still moves the time past the listing's.
    writeFileSync(join(root, 'dashboards', 'e.yaml'), 'e: 1\n');
    expect(await caseTwin(root, 'dashboards/E.yaml')).toBe('dashboards/e.yaml');
    expect(await caseTwin(root, 'dashboards/O7.yaml')).toBe('dashboards/o7.yaml');
  });

  it('finds the twin of a file someone else created between writes of ours', async () => {
    await writer.write('dashboards/seed.yaml', 's: 1\n');
    expect(await caseTwin(root, 'dashboards/H.yaml')).toBeUndefined();
    writeFileSync(join(root, 'dashboards', 'h.yaml'), 'h: 1\n');
    // The next change of ours notes the folder's time as it completes: that must not hide the change before it.
    await writer.remove('dashboards/seed.yaml');
    expect(await caseTwin(root, 'dashboards/H.yaml')).toBe('dashboards/h.yaml');
  });

  it('forgets a name removed between writes of ours, and finds one added back', async () => {
    await writer.write('dashboards/j.yaml', 'j: 1\n');
    expect(await caseTwin(root, 'dashboards/J.yaml')).toBe('dashboards/j.yaml');
    rmSync(join(root, 'dashboards', 'j.yaml'));
    await writer.write('dashboards/k.yaml', 'k: 1\n');
    expect(await caseTwin(root, 'dashboards/J.yaml')).toBeUndefined();
    writeFileSync(join(root, 'dashboards', 'j.yaml'), 'j: 2\n');
    expect(caseTwinSync(root, 'dashboards/J.yaml')).toBe('dashboards/j.yaml');
  });

  it('checks among overlapping writes of its own read the folder once', async () => {
    // The listing's age is not what this test is about: the clock the listing ages by stands still.
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      await writer.write('dashboards/seed.yaml', 's: 1\n');
      expect(await caseTwin(root, 'dashboards/seed.yaml')).toBeUndefined();
      const before = folderReads();
      const names = Array.from({ length: 24 }, (_, i) => `dashboards/w${i}.yaml`);
      // Each write checks first (as the API does); the checks and writes of the others overlap it.
      await Promise.all(names.map(async (n) => {
        expect(await caseTwin(root, n.replace('.yaml', '.YAML'))).toBeUndefined();
        await writer.write(n, 'v: 1\n');
        expect(await caseTwin(root, n.replace('.yaml', '.YAML'))).toBe(n);
      }));
      expect(folderReads() - before).toBe(0);
      await writer.remove('dashboards/w3.yaml');
      expect(await caseTwin(root, 'dashboards/W3.yaml')).toBeUndefined();
      expect(folderReads() - before).toBe(0);
      // A change by someone else is still seen (the folder is read again).
      writeFileSync(join(root, 'dashboards', 'z.yaml'), 'z: 1\n');
      expect(await caseTwin(root, 'dashboards/Z.yaml')).toBe('dashboards/z.yaml');
      expect(folderReads() - before).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a check that finds the time moved by a change of ours not yet completed waits for it instead of reading the folder', async () => {
    await writer.write('dashboards/seed.yaml', 's: 1\n');
    expect(await caseTwin(root, 'dashboards/M.yaml')).toBeUndefined();
    const before = folderReads();
    await ownChange(root, 'dashboards/m.yaml', 'temp', async () => writeFileSync(join(root, 'dashboards', '.m.tmp'), 'm: 1\n'));
    let complete!: () => void;
    const completed = new Promise<void>((r) => (complete = r));
    // The rename lands at once; its completion reaches the event loop later (as from the thread pool).
    const change = ownChange(root, 'dashboards/m.yaml', 'add', async () => {
      renameSync(join(root, 'dashboards', '.m.tmp'), join(root, 'dashboards', 'm.yaml'));
      await completed;
    });
    const checking = caseTwin(root, 'dashboards/M.yaml');
    setTimeout(complete, 20);
    expect(await checking).toBe('dashboards/m.yaml');
    await change;
    expect(await caseTwin(root, 'dashboards/M.yaml')).toBe('dashboards/m.yaml');
    expect(folderReads() - before).toBe(0);
  });

  it('a failed write leaves no name behind', async () => {
    await writer.write('dashboards/seed.yaml', 's: 1\n');
    // A folder where the file should go: the rename fails.
    mkdirSync(join(root, 'dashboards', 'f.yaml', 'inside'), { recursive: true });
    await expect(writer.write('dashboards/f.yaml', 'f: 1\n')).rejects.toThrow(/could not write/);
    expect(await caseTwin(root, 'dashboards/g.yaml')).toBeUndefined();
    expect(await caseTwin(root, 'dashboards/F.yaml')).toBe('dashboards/f.yaml');
  });
});
