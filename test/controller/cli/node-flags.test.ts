import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { SERVE_NODE_FLAGS } from '../../../controller/cli/node-flags.mjs';

const root = join(import.meta.dirname, '..', '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
const launcher = join(root, 'controller', 'cli', 'bictl.mjs');

describe('the server\'s node flags (one list, every way of starting it)', () => {
  it('npm start and npm run bictl pass them', () => {
    expect(pkg.scripts.start).toBe(`exec node ${SERVE_NODE_FLAGS.join(' ')} controller/cli/bictl.mjs serve`);
    expect(pkg.scripts.bictl).toBe(`node ${SERVE_NODE_FLAGS.join(' ')} controller/cli/bictl.mjs`);
  });

  it('the bictl launcher\'s shebang passes them, and a launched bictl really runs with them', () => {
    expect(readFileSync(launcher, 'utf8').split('\n')[0]).toBe(`#!/usr/bin/env -S node ${SERVE_NODE_FLAGS.join(' ')}`);
    // Executed as a program (the shebang), `--version` answers: env -S split the flags and node took them.
    expect(execFileSync(launcher, ['--version'], { encoding: 'utf8' }).trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
