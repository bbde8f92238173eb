import { mkdirSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../controller/config.ts';
import { Runtime } from '../../../controller/runtime.ts';
import { DirectorySource } from '../../../controller/sources/directory.ts';
import { emptyReport, type SourceFile, type SourceSink } from '../../../controller/reconciler/types.ts';
import { manifest } from '../../helpers/runtime.ts';
import { waitFor } from '../../helpers/wait.ts';

const core = (name: string, description = '') => stringify(manifest('CoreModel', name, { name, description }));

describe('DirectorySource (real chokidar)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-watch-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('coalesces a burst of writes into few deltas and reports every file', async () => {
    const calls: { changed: string[]; removed: string[] }[] = [];
    const sink: SourceSink = {
      apply: async (batch) => {
        if (batch.type === 'delta') {
          const files: SourceFile[] = [];
          for await (const f of batch.files) files.push(f);
          calls.push({ changed: files.map((f) => f.path), removed: batch.removed ?? [] });
        }
        return emptyReport();
      },
    };
    const src = new DirectorySource({ root: dir, debounceMs: 100 });
    src.connect(sink);
    await src.start();
    mkdirSync(join(dir, 'core'));
    for (let i = 0; i < 20; i++) writeFileSync(join(dir, 'core', `m${i}.yaml`), core(`m${i}`));
    writeFileSync(join(dir, 'README.txt'), 'not a manifest');
    await waitFor(() => new Set(calls.flatMap((c) => c.changed)).size === 20, { what: '20 paths' });
    await src.stop();
    expect(calls.length).toBeLessThan(5);
    expect([...new Set(calls.flatMap((c) => c.changed))].sort()).toEqual(
      Array.from({ length: 20 }, (_, i) => `core/m${i}.yaml`).sort(),
    );
  });

  it('drives the reconciler end to end: add, edit (atomic save), broken file, delete', async () => {
    const manifests = join(dir, 'manifests');
    const config = loadConfig({}, { manifestsDir: manifests, dbPath: join(dir, 'data', 'bi.sqlite'), dataDir: join(dir, 'data') });
    const rt = new Runtime({ config });
    await rt.start();
    const status = (key: string) => rt.reconciler.status.get(key);
    try {
      expect(rt.reconciler.ready).toBe(true);
      writeFileSync(join(manifests, 'retail.yaml'), core('retail'));
      await waitFor(() => status('CoreModel/retail')?.phase === 'Synced', { what: 'apply' });
      const id = status('CoreModel/retail')?.resourceIds.modelId;

      // An editor's atomic save: write a temp file, rename it over the original.
      writeFileSync(join(manifests, '.retail.yaml.swp'), core('retail', 'edited'));
      renameSync(join(manifests, '.retail.yaml.swp'), join(manifests, 'retail.yaml'));
      await waitFor(() => (rt.db.prepare('SELECT description FROM core_models').get() as { description: string }).description === 'edited', {
        what: 'edit',
      });
      expect(status('CoreModel/retail')?.resourceIds.modelId).toBe(id);

      writeFileSync(join(manifests, 'retail.yaml'), 'spec: [broken');
      await waitFor(() => status('CoreModel/retail')?.phase === 'Invalid', { what: 'invalid' });
      expect(rt.db.prepare('SELECT COUNT(*) AS n FROM core_models').get()).toEqual({ n: 1 });

      writeFileSync(join(manifests, 'other.yaml'), core('other'));
      await waitFor(() => status('CoreModel/other')?.phase === 'Synced', { what: 'other' });
      unlinkSync(join(manifests, 'retail.yaml'));
      await waitFor(() => status('CoreModel/retail')?.phase === 'Pruned', { what: 'prune' });
      expect(rt.db.prepare('SELECT name FROM core_models').all()).toEqual([{ name: 'other' }]);
    } finally {
      await rt.stop();
    }
  });
});
