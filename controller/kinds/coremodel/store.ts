import type { ApiCoreModelList } from '../../generated/schema-types.ts';
import type { Store } from '../../store/db.ts';
import { columnTypesOf } from '../dashboard/fields.ts';

/** A stored definition's JSON, or undefined when it does not parse. */
function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Column names a core model's definition lists (`columns: [name | {name}]`), for the wizard's VDM picker. */
export function modelColumns(definition: string): string[] {
  const cols = (safeJson(definition) as { columns?: unknown } | null | undefined)?.columns;
  if (!Array.isArray(cols)) return [];
  const names = cols.map((c) => (typeof c === 'string' ? c : c && typeof c === 'object' && typeof (c as { name?: unknown }).name === 'string' ? (c as { name: string }).name : null));
  return [...new Set(names.filter((n): n is string => n !== null && n !== ''))];
}

/** Every core model (table `core_models`, owned by this kind) with its columns and their types, by name then ID. */
export function listCoreModels(db: Store): ApiCoreModelList['coreModels'] {
  const rows = db.statements.prepare('SELECT model_id, name, description, definition FROM core_models ORDER BY name, model_id').all() as {
    model_id: string;
    name: string;
    description: string;
    definition: string;
  }[];
  return rows.map((r) => ({
    modelId: r.model_id,
    name: r.name,
    description: r.description,
    columns: modelColumns(r.definition),
    columnTypes: Object.fromEntries(columnTypesOf(safeJson(r.definition))),
  }));
}
