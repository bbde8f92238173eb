import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../paths.ts';

/** The version of package.json (read at run time, so the bundle never shows a stale one). */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}
