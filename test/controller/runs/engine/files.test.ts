import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatOf, openInside, parseRows } from '../../../../controller/runs/engine/sources/files.ts';
import type { Row } from '../../../../controller/runs/types.ts';

const base = mkdtempSync(join(tmpdir(), 'bi-files-test-'));
const dir = join(base, 'files');
mkdirSync(join(dir, 'sub'), { recursive: true });
writeFileSync(join(base, 'secret.csv'), 'a\n1\n');
writeFileSync(join(dir, 'sub', 'in.csv'), 'a\n2\n');
symlinkSync(join(base, 'secret.csv'), join(dir, 'out-link.csv'));
symlinkSync(join(dir, 'sub', 'in.csv'), join(dir, 'in-link.csv'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

async function rows(path: string, format: 'csv' | 'json' | 'ndjson', rootKey?: string, maxRecordBytes = 1024 * 1024): Promise<Row[]> {
  const handle = await openInside(dir, path);
  const out: Row[] = [];
  try {
    for await (const b of parseRows(handle.createReadStream(), { format, batchSize: 2, rootKey, maxRecordBytes })) out.push(...b);
  } finally {
    await handle.close();
  }
  return out;
}

describe('file sources', () => {
  it('refuse paths escaping BI_PIPELINE_FILES_DIR: .., absolute, a symlink out; a symlink inside is read', async () => {
    await expect(openInside(dir, '../secret.csv')).rejects.toThrow('file ../secret.csv must be a path inside BI_PIPELINE_FILES_DIR');
    await expect(openInside(dir, join(base, 'secret.csv'))).rejects.toThrow(/must be a path inside/);
    await expect(openInside(dir, 'out-link.csv')).rejects.toThrow('file out-link.csv resolves outside BI_PIPELINE_FILES_DIR');
    await expect(openInside(dir, 'sub')).rejects.toThrow('file sub is not a regular file');
    await expect(openInside(dir, 'missing.csv')).rejects.toThrow('file missing.csv does not exist in BI_PIPELINE_FILES_DIR');
    expect(await rows('in-link.csv', 'csv')).toEqual([{ a: '2' }]);
  });

  it('CSV: header row, quoted fields with commas and newlines, unquoted empty → null, quoted empty → ""', async () => {
    writeFileSync(join(dir, 'q.csv'), 'id,note,empty\n1,"a, b\nc",\n2,"",x\n');
    expect(await rows('q.csv', 'csv')).toEqual([
      { id: '1', note: 'a, b\nc', empty: null },
      { id: '2', note: '', empty: 'x' },
    ]);
  });

  it('JSON: a top-level array or the array at rootKey, streamed; NDJSON: one object per line', async () => {
    writeFileSync(join(dir, 'a.json'), '[{"x":1},{"x":2},{"x":3}]');
    writeFileSync(join(dir, 'b.json'), '{"meta":{},"data":[{"x":1}]}');
    writeFileSync(join(dir, 'c.ndjson'), '{"x":1}\n\n{"x":2}\n');
    expect(await rows('a.json', 'json')).toEqual([{ x: 1 }, { x: 2 }, { x: 3 }]);
    expect(await rows('b.json', 'json', 'data')).toEqual([{ x: 1 }]);
    expect(await rows('c.ndjson', 'ndjson')).toEqual([{ x: 1 }, { x: 2 }]);
    writeFileSync(join(dir, 'bad.ndjson'), '{"x":1}\nnope\n');
    await expect(rows('bad.ndjson', 'ndjson')).rejects.toThrow(/^line 2 is not JSON/);
  });

  it('BI_RUN_MAX_RECORD_BYTES: a CSV line, an NDJSON line or a JSON element past the cap fails, naming the cap and not the content', async () => {
    const big = 's3cr3t'.repeat(100);
    writeFileSync(join(dir, 'big.csv'), `id,note\n1,short\n2,${big}\n`);
    writeFileSync(join(dir, 'big.ndjson'), `{"id":1}\n{"id":"${big}"}\n`);
    writeFileSync(join(dir, 'big.json'), `{"data":[{"id":1},{"id":"${big}"}]}`);
    await expect(rows('big.csv', 'csv', undefined, 256)).rejects.toThrow(/^record on line \d+ larger than BI_RUN_MAX_RECORD_BYTES \(256 bytes\)$/);
    await expect(rows('big.ndjson', 'ndjson', undefined, 256)).rejects.toThrow('record on line 2 larger than BI_RUN_MAX_RECORD_BYTES (256 bytes)');
    await expect(rows('big.json', 'json', 'data', 256)).rejects.toThrow('record at element 2 larger than BI_RUN_MAX_RECORD_BYTES (256 bytes)');
    expect(await rows('big.csv', 'csv', undefined, 1024)).toHaveLength(2);
    writeFileSync(join(dir, 'bad.csv'), 'id,note\n1,"s3cr3t"x\n');
    await expect(rows('bad.csv', 'csv')).rejects.toThrow(/^CSV CSV_\w+ on line 2$/);
  });

  it('format from config or extension', () => {
    expect(formatOf('a.CSV', undefined)).toBe('csv');
    expect(formatOf('a.jsonl', undefined)).toBe('ndjson');
    expect(formatOf('a.txt', 'json')).toBe('json');
    expect(() => formatOf('a.txt', undefined)).toThrow(/set config.format/);
  });
});
