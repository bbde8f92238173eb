import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../controller/config.ts';
import { createRuntime } from '../../../controller/runtime.ts';
import { DirectorySource } from '../../../controller/sources/directory.ts';
import { emptyReport, type SourceFile, type SourceSink } from '../../../controller/reconciler/types.ts';
import { sha256 } from '../../../controller/hash.ts';
import { manifest, testSchemas } from '../../helpers/runtime.ts';
import { waitFor } from '../../helpers/wait.ts';

const core = (name: string, description = '') => stringify(manifest('CoreModel', name, { name, description }));

interface Delivered {
  type: 'full' | 'delta';
  changed: string[];
  removed: string[];
}

/** A sink that records what the source delivers. */
function recordingSink(): { sink: SourceSink; batches: Delivered[]; changed(): string[] } {
  const batches: Delivered[] = [];
  const sink: SourceSink = {
    apply: async (batch) => {
      const files: SourceFile[] = [];
      for await (const f of batch.files) files.push(f);
      batches.push({ type: batch.type, changed: files.map((f) => f.path), removed: batch.removed ?? [] });
      return emptyReport();
    },
  };
  return { sink, batches, changed: () => batches.filter((b) => b.type === 'delta').flatMap((b) => b.changed) };
}

describe('DirectorySource (real watcher)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-watch-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('drives the reconciler end to end: add, edit (atomic save), broken file, delete', async () => {
    const manifests = join(dir, 'manifests');
    const config = loadConfig({}, { manifestsDir: manifests, dbPath: join(dir, 'data', 'bi.sqlite'), dataDir: join(dir, 'data') });
    // A removal waits out the mass-prune guard's window (10 s by default) before it is pruned.
    const rt = createRuntime({ config, pruneWindowMs: 50, schemas: testSchemas() });
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

  describe('watcher rules', () => {
    let src: DirectorySource;
    let rec: ReturnType<typeof recordingSink>;
    const write = (rel: string, text: string) => {
      mkdirSync(join(dir, rel, '..'), { recursive: true });
      writeFileSync(join(dir, rel), text);
    };
    /** Writes a file and waits until a delta delivered it: everything before it was seen. */
    const sentinel = async (name: string) => {
      write(`${name}.yaml`, core(name));
      await waitFor(() => rec.changed().includes(`${name}.yaml`), { what: name });
    };

    beforeEach(async () => {
      rec = recordingSink();
      src = new DirectorySource({ root: dir, debounceMs: 30 });
      src.connect(rec.sink);
    });
    afterEach(() => src.stop());

    it('delivers an atomic save (temp file renamed over the original) as one change, never a removal', async () => {
      write('a.yaml', core('a'));
      await src.start();
      writeFileSync(join(dir, 'a.yaml.tmp~'), core('a', 'edited'));
      renameSync(join(dir, 'a.yaml.tmp~'), join(dir, 'a.yaml'));
      await waitFor(() => rec.changed().includes('a.yaml'), { what: 'the save' });
      expect(rec.batches.flatMap((b) => b.removed)).toEqual([]);
    });


    /** A source whose timers are the test's: a batch closes only when the test fires them. */
    const manualSource = (extra: { burstRelistPaths?: number } = {}) => {
      const timers: { ms: number; fn: () => void; cancelled: boolean }[] = [];
      const source = new DirectorySource({
        root: dir,
        debounceMs: 30,
        ...extra,
        scheduler: (fn, ms) => {
          const t = { ms, fn, cancelled: false };
          timers.push(t);
          return () => void (t.cancelled = true);
        },
      });
      const seen = recordingSink();
      source.connect(seen.sink);
      const fire = (ms: number) => timers.filter((t) => t.ms === ms && !t.cancelled).forEach((t) => { t.cancelled = true; t.fn(); });
      const live = (ms: number) => timers.some((t) => t.ms === ms && !t.cancelled);
      return { manual: source, seen, fire, live };
    };

    it('coalesces a burst of writes into one delta while its debounce has not run out, and reports every file', async () => {
      const { manual, seen, fire } = manualSource();
      mkdirSync(join(dir, 'core'));
      await manual.start();
      try {
        for (let i = 0; i < 20; i++) writeFileSync(join(dir, 'core', `m${i}.yaml`), core(`m${i}`));
        writeFileSync(join(dir, 'README.txt'), 'not a manifest');
        // However the watcher splits the events in time, they join the open batch.
        await waitFor(() => manual.waiting === 20, { what: '20 paths waiting' });
        expect(seen.changed()).toEqual([]);
        fire(30);
        await waitFor(() => seen.changed().length > 0, { what: 'the delta' });
        expect(seen.batches.filter((b) => b.type === 'delta').map((b) => b.changed.sort())).toEqual([
          Array.from({ length: 20 }, (_, i) => `core/m${i}.yaml`).sort(),
        ]);
      } finally {
        await manual.stop();
      }
    });

    it('delivers a burst of removals as one delta (held open for its minimum age), so the mass-prune guard sees it whole', async () => {
      const { manual, seen, fire } = manualSource();
      for (let i = 1; i <= 8; i++) write(`c${i}.yaml`, core(`c${i}`));
      await manual.start();
      try {
        for (let i = 1; i <= 8; i++) rmSync(join(dir, `c${i}.yaml`));
        await waitFor(() => manual.waiting === 8, { what: '8 removals waiting' });
        fire(30);
        fire(60);
        await waitFor(() => seen.batches.some((b) => b.removed.length > 0), { what: 'the removals' });
        expect(seen.batches.filter((b) => b.type === 'delta').map((b) => b.removed.length)).toEqual([8]);
      } finally {
        await manual.stop();
      }
    });

    it('holds a batch open for the minimum age only when it holds a removal (a save is applied after the debounce)', async () => {
      const { manual, seen, fire, live } = manualSource();
      write('keep.yaml', core('keep'));
      write('gone.yaml', core('gone'));
      await manual.start();
      try {
        write('keep.yaml', core('keep', 'edited'));
        await waitFor(() => live(30), { what: 'the debounce of the save' });
        expect(live(60)).toBe(false);
        fire(30);
        await waitFor(() => seen.changed().includes('keep.yaml'), { what: 'the save, after the debounce alone' });

        rmSync(join(dir, 'gone.yaml'));
        await waitFor(() => live(30) && live(60), { what: 'the removal\'s timers' });
        fire(30);
        await new Promise((r) => setImmediate(r));
        expect(seen.batches.flatMap((b) => b.removed)).toEqual([]);
        fire(60);
        await waitFor(() => seen.batches.flatMap((b) => b.removed).includes('gone.yaml'), { what: 'the removal, after its minimum age' });
      } finally {
        await manual.stop();
      }
    });

    it('relists the folder once a big burst is over (inotify drops events past its queue, silently for the watcher)', async () => {
      const { manual, seen, fire, live } = manualSource({ burstRelistPaths: 3 });
      await manual.start();
      try {
        const fulls = () => seen.batches.filter((b) => b.type === 'full').length;
        /** Fires the debounce of each batch until the files were delivered (the watcher may split them). */
        const deliver = async (...names: string[]) => {
          await waitFor(() => {
            fire(30);
            return names.every((n) => seen.changed().includes(n));
          }, { what: names.join(', ') });
        };
        const before = fulls();
        // A burst under the limit: no relist.
        write('a.yaml', core('a'));
        write('b.yaml', core('b'));
        await deliver('a.yaml', 'b.yaml');
        expect(live(1000)).toBe(true);
        fire(1000);
        await new Promise((r) => setImmediate(r));
        expect(fulls()).toBe(before);
        // Three paths in one burst (two flushes at least): relisted once it is over.
        write('c.yaml', core('c'));
        await deliver('c.yaml');
        write('d.yaml', core('d'));
        write('e.yaml', core('e'));
        await deliver('d.yaml', 'e.yaml');
        expect(fulls()).toBe(before);
        fire(1000);
        await waitFor(() => fulls() === before + 1, { what: 'the relist' });
        expect(seen.batches.at(-1)?.changed.sort()).toEqual(['a.yaml', 'b.yaml', 'c.yaml', 'd.yaml', 'e.yaml']);
      } finally {
        await manual.stop();
      }
    });

    it('lists a folder that appears (files written before its watch was in place) and relists when a folder goes away', async () => {
      write('keep.yaml', core('keep'));
      await src.start();
      mkdirSync(join(dir, 'moved-in'));
      writeFileSync(join(dir, 'moved-in', 'x.yaml'), core('x'));
      const outside = mkdtempSync(join(tmpdir(), 'bi-outside-'));
      writeFileSync(join(outside, 'y.yaml'), core('y'));
      renameSync(outside, join(dir, 'moved-dir'));
      await waitFor(() => rec.changed().includes('moved-in/x.yaml') && rec.changed().includes('moved-dir/y.yaml'), { what: 'folder contents' });

      const fulls = rec.batches.filter((b) => b.type === 'full').length;
      rmSync(join(dir, 'moved-dir'), { recursive: true });
      await waitFor(() => rec.batches.filter((b) => b.type === 'full').length > fulls, { what: 'relist' });
      expect(rec.batches.at(-1)?.changed.sort()).toEqual(['keep.yaml', 'moved-in/x.yaml']);
    });

    it('ignores dot-folders and does not follow directory symlinks', async () => {
      const outside = mkdtempSync(join(tmpdir(), 'bi-outside-'));
      try {
        await src.start();
        write('.git/objects/o.yaml', core('o'));
        write('sub/.cache/c.yaml', core('c'));
        symlinkSync(outside, join(dir, 'link'));
        writeFileSync(join(outside, 'z.yaml'), core('z'));
        await sentinel('after');
        writeFileSync(join(outside, 'z2.yaml'), core('z2'));
        await sentinel('after2');
        const seen = rec.batches.flatMap((b) => [...b.changed, ...b.removed]);
        expect(seen.filter((p) => !p.startsWith('after'))).toEqual([]);
      } finally {
        rmSync(outside, { recursive: true, force: true });
      }
    });

    it('watches a root that is itself a symlink to a folder', async () => {
      const real = join(dir, 'real');
      mkdirSync(real);
      symlinkSync(real, join(dir, 'root-link'));
      const linked = new DirectorySource({ root: join(dir, 'root-link'), debounceMs: 30 });
      const seen = recordingSink();
      linked.connect(seen.sink);
      try {
        await linked.start();
        writeFileSync(join(real, 'l.yaml'), core('l'));
        await waitFor(() => seen.changed().includes('l.yaml'), { what: 'a file under the linked root' });
      } finally {
        await linked.stop();
      }
    });

    it("drops the event of the API's own write while the file has that content; an edit right after is delivered", async () => {
      await src.start();
      const text = core('own');
      src.noteOwnWrite('own.yaml', sha256(text));
      write('own.yaml', text);
      await sentinel('after');
      expect(rec.changed()).not.toContain('own.yaml');

      src.noteOwnWrite('own.yaml', sha256(text));
      write('own.yaml', text);
      write('own.yaml', core('own', 'edited by hand'));
      await waitFor(() => rec.changed().includes('own.yaml'), { what: 'the edit' });
    });
  });
});
