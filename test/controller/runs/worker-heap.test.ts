import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { processSemiSpaceMb } from '../../../controller/runs/worker-heap.ts';

const HELPER = fileURLToPath(new URL('../../../controller/runs/worker-heap.ts', import.meta.url));

/**
 * In a process started with `--max-semi-space-size=4` (as `npm start` runs the server): the heap
 * limit of a worker (old generation 128 MB + young generation) made plainly, through
 * `withSemiSpace(16)` twice at once, and plainly again afterwards.
 */
function limitsInSmallYoungProcess(): { main: number; plain: number; engine: number[]; after: number } {
  const script = `
    import { Worker } from 'node:worker_threads';
    import { withSemiSpace } from ${JSON.stringify(HELPER)};
    const code = 'import { parentPort } from "node:worker_threads"; import { getHeapStatistics } from "node:v8"; parentPort.postMessage(getHeapStatistics().heap_size_limit / 1048576);';
    const make = () => new Worker(code, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 128 } });
    const limit = (w) => new Promise((res) => w.once('message', res));
    const plain = await limit(make());
    const engine = await Promise.all([limit(withSemiSpace(16, make)), limit(withSemiSpace(16, make))]);
    const after = await limit(make());
    const { getHeapStatistics } = await import('node:v8');
    console.log(JSON.stringify({ main: getHeapStatistics().heap_size_limit / 1048576, plain, engine, after }));
  `;
  const out = execFileSync(process.execPath, ['--max-semi-space-size=4', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop() ?? '{}');
}

describe('withSemiSpace', () => {
  it("gives a worker V8's default young generation while the process runs with a small one, and puts the small one back", () => {
    const r = limitsInSmallYoungProcess();
    // Young generation = 3 semi-spaces: 4 MB → 12 MB, 16 MB → 48 MB.
    expect(r.plain).toBe(128 + 12);
    expect(r.engine).toEqual([128 + 48, 128 + 48]);
    expect(r.after).toBe(128 + 12);
  });

  it("reads the process's semi-space size from its flags or NODE_OPTIONS", () => {
    expect(processSemiSpaceMb([], '')).toBe(0);
    expect(processSemiSpaceMb(['--max-semi-space-size=4'], '')).toBe(4);
    expect(processSemiSpaceMb(['--max-semi-space-size', '8'], '')).toBe(8);
    expect(processSemiSpaceMb([], '--max_semi_space_size=2 --enable-source-maps')).toBe(2);
    expect(processSemiSpaceMb(['--max-semi-space-size=4'], '--max-semi-space-size=2')).toBe(4);
  });
});
