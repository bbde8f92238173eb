import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../controller/paths.ts';

/** The variables `controller/config.ts` reads (`env.NAME`). */
function parsed(): string[] {
  const source = readFileSync(join(ROOT, 'controller', 'config.ts'), 'utf8');
  return [...new Set([...source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]))].sort();
}

/** The variables named in the first cell of the rows of docs/configuration.md's table. */
function documented(): string[] {
  const doc = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
  const names = doc
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...(l.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]));
  return [...new Set(names)].sort();
}

describe('docs/configuration.md', () => {
  it('lists exactly the variables the configuration parser reads (add a row with each new variable)', () => {
    expect(documented()).toEqual(parsed());
  });

  it('documents durations with their unit, as the parser requires', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
    expect(doc).toContain('A plain number is refused');
    expect(doc).not.toMatch(/milliseconds\)/);
  });
});
