import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../paths.ts';

/** The example manifests shipped with the code (tracked in git; never written by the API). */
export const EXAMPLES_DIR = join(ROOT, 'manifests');

/**
 * The default manifests folder (`./workspace/manifests`, not tracked) starts as a copy of the
 * shipped examples, so a fresh clone has something to reconcile and the API's writes never land
 * in the checkout's tracked files. Only a folder that does not exist yet is seeded; a configured
 * BI_MANIFESTS_DIR never is. Answers whether it seeded.
 */
export function seedManifests(target: string, examples: string = EXAMPLES_DIR): boolean {
  if (existsSync(target) || !existsSync(examples)) return false;
  cpSync(examples, target, { recursive: true, errorOnExist: true, force: false });
  return true;
}
