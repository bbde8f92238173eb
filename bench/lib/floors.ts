import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { percentile, round } from './load.ts';

/**
 * The physical floor of one API write: the same manifest text written to a temp file,
 * fsynced and renamed into place, `n` times in a row (what the product's atomic writer does).
 * Returns per-write latency p50/p99 in ms.
 */
export function fsyncRenameFloor(dir: string, text: string, n: number): { p50: number; p99: number } {
  mkdirSync(dir, { recursive: true });
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const tmp = join(dir, `.${randomBytes(6).toString('hex')}.tmp`);
    const fd = openSync(tmp, 'w', 0o644);
    writeSync(fd, text);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, join(dir, `floor-${i}.yaml`));
    times.push(performance.now() - t0);
  }
  return { p50: round(percentile(times, 50), 3), p99: round(percentile(times, 99), 3) };
}
