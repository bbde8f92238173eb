import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../controller/errors.ts';
import { caseTwin, caseTwinSync } from '../../../controller/writers/case-twin.ts';
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

  it('a failed write leaves no name behind', async () => {
    await writer.write('dashboards/seed.yaml', 's: 1\n');
    // A folder where the file should go: the rename fails.
    mkdirSync(join(root, 'dashboards', 'f.yaml', 'inside'), { recursive: true });
    await expect(writer.write('dashboards/f.yaml', 'f: 1\n')).rejects.toThrow(/could not write/);
    expect(await caseTwin(root, 'dashboards/g.yaml')).toBeUndefined();
    expect(await caseTwin(root, 'dashboards/F.yaml')).toBe('dashboards/f.yaml');
  });
});
