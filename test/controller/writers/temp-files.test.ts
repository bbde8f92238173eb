import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer } from '../../../api/server.ts';
import { loadConfig } from '../../../controller/config.ts';
import { removeStaleTempFiles, writeFileAtomic } from '../../../controller/writers/directory.ts';
import { testSchemas } from '../../helpers/schemas.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bi-tmpfiles-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('temp files left by a crash', () => {
  it('are removed at start, anywhere under the manifests folder; other files stay', async () => {
    const m = join(dir, 'manifests');
    mkdirSync(join(m, 'dashboards'), { recursive: true });
    // What a write killed between open and rename leaves: writeFileAtomic's own temp name.
    writeFileSync(join(m, 'dashboards', '.0123456789ab.tmp'), 'apiVersion: bi.controller/v1\nkind: Dash');
    writeFileSync(join(m, '.deadbeef0000.tmp'), '');
    writeFileSync(join(m, 'notes.tmp'), 'mine');
    writeFileSync(join(m, '.editor.swp.tmp'), 'mine too');
    const server = await startServer(loadConfig({}, { manifestsDir: m, dbPath: join(dir, 'data', 'bi.sqlite'), dataDir: join(dir, 'data'), port: 0, logLevel: 'silent' }), { schemas: testSchemas() });
    try {
      expect(readdirSync(m, { recursive: true }).map(String).sort()).toEqual(['.editor.swp.tmp', 'dashboards', 'notes.tmp']);
    } finally {
      await server.close();
    }
  });

  it('match only the names writeFileAtomic makes', async () => {
    const m = join(dir, 'm');
    await writeFileAtomic(join(m, 'a.yaml'), 'x: 1\n');
    writeFileSync(join(m, '.aaaaaaaaaaaa.tmp'), '');
    expect(await removeStaleTempFiles(m)).toEqual([join(m, '.aaaaaaaaaaaa.tmp')]);
    expect(existsSync(join(m, 'a.yaml'))).toBe(true);
    expect(await removeStaleTempFiles(join(dir, 'absent'))).toEqual([]);
  });
});

describe('writeFileAtomic', () => {
  it('writes every byte of a large text, in a folder it makes', async () => {
    const text = `${'é'.repeat(300_000)}\n`;
    await writeFileAtomic(join(dir, 'new', 'big.yaml'), text);
    expect(readFileSync(join(dir, 'new', 'big.yaml'), 'utf8')).toBe(text);
    expect(readdirSync(join(dir, 'new'))).toEqual(['big.yaml']);
  });

  it('leaves no temp file behind when the write fails, and the old content stays', async () => {
    // The rename fails: the target is a folder with a file in it.
    mkdirSync(join(dir, 'taken.yaml'));
    writeFileSync(join(dir, 'taken.yaml', 'inside'), 'x');
    await expect(writeFileAtomic(join(dir, 'taken.yaml'), 'y: 1\n')).rejects.toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(readdirSync(dir)).toEqual(['taken.yaml']);
    expect(readFileSync(join(dir, 'taken.yaml', 'inside'), 'utf8')).toBe('x');
  });
});
