/** A JSON object (not null, not an array): what a parsed document or request body must be before its fields are read. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A field path one level down: `fieldPath('spec', 'name')` is `spec.name`, `fieldPath('', 'name')` is `name`. */
export function fieldPath(prefix: string, field: string): string {
  return prefix ? `${prefix}.${field}` : field;
}
