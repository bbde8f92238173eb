import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXAMPLES_DIR, seedManifests } from '../../../controller/sources/seed.ts';

describe('the default manifests folder', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-seed-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('starts as a copy of the shipped examples, so API writes never land in the checkout', () => {
    const target = join(dir, 'workspace', 'manifests');
    expect(seedManifests(target)).toBe(true);
    expect(readdirSync(target).sort()).toEqual(readdirSync(EXAMPLES_DIR).sort());
    expect(existsSync(join(target, 'clients', 'ACME.yaml'))).toBe(true);
  });

  it('an existing folder (even an empty one) is never seeded again', () => {
    const target = join(dir, 'm');
    mkdirSync(target);
    expect(seedManifests(target)).toBe(false);
    expect(readdirSync(target)).toEqual([]);
    writeFileSync(join(target, 'x.yaml'), '');
    expect(seedManifests(target)).toBe(false);
  });
});
