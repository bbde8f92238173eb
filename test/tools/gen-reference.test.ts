import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KINDS } from '../../controller/generated/schema-constants.ts';
import { ROOT } from '../../controller/paths.ts';
import { generate, OUTPUTS } from '../../tools/gen-reference.ts';

describe('gen:reference', () => {
  it('the committed references are what the schemas and the commands generate (run `npm run gen:reference` after changing either)', async () => {
    const generated = await generate();
    expect([...generated.keys()].sort()).toEqual(Object.values(OUTPUTS).sort());
    for (const [path, content] of generated) expect(readFileSync(join(ROOT, path), 'utf8'), path).toBe(content);
  });

  it('names every kind and every bictl command', async () => {
    const generated = await generate();
    const manifests = generated.get(OUTPUTS.manifests) ?? '';
    for (const kind of KINDS) expect(manifests).toContain(`\n## ${kind}\n`);
    const cli = generated.get(OUTPUTS.cli) ?? '';
    for (const cmd of ['serve', 'validate', 'diff', 'sync', 'status', 'rollback', 'run', 'backup', 'users add', 'users grant']) expect(cli).toContain(`# bictl ${cmd}\n`);
    expect(cli).toContain('--strict');
  });
});
