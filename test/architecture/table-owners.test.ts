import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../controller/paths.ts';

/**
 * Each kind owns its tables (docs/architecture.md): SQL naming them is written under
 * controller/kinds/ only; everyone else reads and writes through the kinds' modules.
 */
const KIND_TABLES = ['clients', 'semantic_models', 'vdms', 'connections', 'connection_tests', 'facades', 'experiments', 'pipelines', 'pipeline_steps', 'core_models', 'clientsets', 'clientset_tenants', 'clientset_history'];

/** Every TypeScript source of the controller and the API (migrations are SQL, the console is JavaScript). */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'generated' ? [] : sources(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** The kind tables a source's SQL names (`FROM t`, `JOIN t`, `INTO t`, `UPDATE t`). */
function tablesNamed(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/\b(?:FROM|JOIN|INTO|UPDATE)\s+([a-z_]+)\b/g)) if (KIND_TABLES.includes(m[1])) found.add(m[1]);
  return [...found].sort();
}

describe('table ownership', () => {
  it('finds the table names of SQL (the check can fail)', () => {
    expect(tablesNamed("db.prepare('SELECT c.id FROM connections c JOIN clients k ON k.x = c.x')")).toEqual(['clients', 'connections']);
    expect(tablesNamed("db.prepare('DELETE FROM pipeline_runs WHERE 1')")).toEqual([]);
  });

  it('names the tables of a kind only in controller/kinds/', () => {
    const outside = [...sources(join(ROOT, 'controller')), ...sources(join(ROOT, 'api'))]
      .map((p) => relative(ROOT, p))
      .filter((p) => !p.startsWith('controller/kinds/'))
      .map((p) => ({ file: p, tables: tablesNamed(readFileSync(join(ROOT, p), 'utf8')) }))
      .filter((f) => f.tables.length > 0);
    expect(outside).toEqual([]);
  });
});
