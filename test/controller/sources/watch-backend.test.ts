import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../../controller/paths.ts';
import { watchBackend } from '../../../controller/sources/watch-backend.ts';

describe('the file watcher', () => {
  it('names the native backend of each platform (no watchman probe)', () => {
    expect(['linux', 'darwin', 'win32', 'freebsd'].map((p) => watchBackend(p as NodeJS.Platform))).toEqual([
      { backend: 'inotify' },
      { backend: 'fs-events' },
      { backend: 'windows' },
      {},
    ]);
  });

  it.skipIf(process.platform !== 'linux')('a watching folder source starts no shell (it was left defunct, one per server)', () => {
    // In a process of its own, so no other test's children are counted.
    const dir = mkdtempSync(join(tmpdir(), 'bi-watch-'));
    try {
      const script = join(dir, 'watch.mts');
      const source = pathToFileURL(join(ROOT, 'controller', 'sources', 'directory.ts')).href;
      writeFileSync(
        script,
        `import { readFileSync, readdirSync } from 'node:fs';
import { DirectorySource } from ${JSON.stringify(source)};
const src = new DirectorySource({ root: ${JSON.stringify(join(dir, 'm'))}, watch: true });
await src.start();
const kids = readdirSync('/proc/self/task').flatMap((t) => readFileSync('/proc/self/task/' + t + '/children', 'utf8').split(' ').filter(Boolean));
// The probe's shell, running or already defunct (it is never reaped).
const shells = kids.filter((k) => { try { return readFileSync('/proc/' + k + '/stat', 'utf8').includes(' (sh) '); } catch { return false; } });
console.log(JSON.stringify(shells));
await src.stop();
process.exit(0);
`,
      );
      const out = execFileSync(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, encoding: 'utf8' });
      expect(JSON.parse(out.trim().split('\n').at(-1) ?? 'null')).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
