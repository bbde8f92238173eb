import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository root, where the files read at run time live (schemas, migrations, UI assets).
 * This module sits one level below it (controller/), and so does the bundle `bictl` runs
 * (dist/bictl.mjs), so the same expression holds for both.
 */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
