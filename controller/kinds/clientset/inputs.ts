import { parse as parseCsv } from 'csv-parse/sync';
import { parse as parseYaml } from 'yaml';
import type { SchemaRegistry } from '../../manifest/validator.ts';
import { MAX_YAML_ALIASES } from '../../manifest/loader.ts';
import { isPlainObject } from '../../objects.ts';
import type { SourceFile } from '../../contract.ts';
import type { Problem } from '../../types.ts';
import type { ClientSetSpec, Input } from './types.ts';

/** The inputs of a set, or why they could not be read (the whole set then holds). */
export type ReadInputs = { ok: true; inputs: Input[]; files: Record<string, string> } | { ok: false; problems: Problem[] };

/**
 * Inline inputs, then each `inputsFrom` file's rows, read through `read` (the source's filesystem
 * boundary: regular files inside the manifests root only). Every input is checked against the
 * Input schema; ids must be unique across the set.
 */
export function readInputs(spec: ClientSetSpec, read: (path: string) => SourceFile | null, schemas: SchemaRegistry, hash: (b: Buffer) => string): ReadInputs {
  const inputs: Input[] = [];
  const files: Record<string, string> = {};
  const problems: Problem[] = [];
  const add = (raw: unknown, at: string) => {
    const checked = schemas.validate<Input>('clientset', { resources: [{ kind: 'Client', metadata: { name: 'x' }, spec: {} }], inputs: [raw] });
    if (!checked.ok) {
      problems.push(...checked.problems.map((p) => ({ path: at, message: `${at}: ${p.message.replace(/^inputs\[0\]\.?/, '')}` })));
      return;
    }
    inputs.push(raw as Input);
  };
  (spec.inputs ?? []).forEach((input) => inputs.push(input));
  (spec.inputsFrom ?? []).forEach((from, i) => {
    const at = `spec.inputsFrom[${i}].path`;
    const file = read(from.path);
    if (!file) {
      problems.push({ path: at, message: `${at}: ${from.path} does not exist` });
      return;
    }
    if ('unreadable' in file) {
      problems.push({ path: at, message: `${at}: ${from.path}: ${file.unreadable}` });
      return;
    }
    files[from.path] = hash(file.bytes);
    const rows = parseRows(from.path, file.bytes);
    if (!rows.ok) {
      problems.push({ path: at, message: `${at}: ${from.path}: ${rows.message}` });
      return;
    }
    rows.rows.forEach((row, r) => add(row, `${from.path}[${r}]`));
  });
  const seen = new Set<string>();
  for (const input of inputs) {
    if (seen.has(input.id)) problems.push({ path: 'spec.inputs', message: `input id ${input.id} is used twice` });
    seen.add(input.id);
  }
  return problems.length ? { ok: false, problems } : { ok: true, inputs, files };
}

function parseRows(path: string, bytes: Buffer): { ok: true; rows: unknown[] } | { ok: false; message: string } {
  const text = bytes.toString('utf8');
  try {
    if (path.toLowerCase().endsWith('.csv')) {
      const rows = parseCsv(text, { columns: true, skip_empty_lines: true, trim: true, bom: true }) as Record<string, string>[];
      return { ok: true, rows };
    }
    const doc: unknown = path.toLowerCase().endsWith('.json') ? JSON.parse(text) : parseYaml(text, { maxAliasCount: MAX_YAML_ALIASES, uniqueKeys: true });
    if (!Array.isArray(doc) || !doc.every(isPlainObject)) return { ok: false, message: 'must be a list of objects' };
    return { ok: true, rows: doc };
  } catch (err) {
    return { ok: false, message: `does not parse (${(err as Error).message.split('\n')[0]})` };
  }
}
