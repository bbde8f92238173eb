import type { AnySchemaObject, ErrorObject } from 'ajv/dist/2020.js';
import type { Problem } from '../types.ts';

/**
 * Which objects of a manifest may carry keys the schemas do not name (the rule, per kind, is in
 * docs/reference/manifests.md, "Unknown fields"):
 * - an object whose schema lists `properties` is closed: another key is reported (a warning with
 *   the nearest known name, an error with BI_STRICT_MANIFESTS / `--strict`);
 * - an object whose schema lists no `properties` (CoreModel `definition`, VDM `securityBindings`,
 *   a chart's `filters` items, a rule's `params`) is free: nothing is reported;
 * - `additionalProperties: true` opens an object on purpose (a Pipeline's source and step
 *   `config`: values are inherited into it and each source type reads keys of its own).
 *
 * `closeSchema` marks each closed object `unevaluatedProperties: false`, so that ajv itself
 * (which knows which `if`/`then` branch applied) finds the unknown keys.
 */
export function closeSchema(schema: AnySchemaObject): AnySchemaObject {
  const walk = (node: unknown, atLocation: boolean): unknown => {
    if (Array.isArray(node) || !node || typeof node !== 'object') return node;
    const obj = node as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj)) {
      if (k === 'properties' || k === 'patternProperties' || k === '$defs') out[k] = mapValues(v, (child) => walk(child, true));
      else if (k === 'items' || k === 'additionalProperties' || k === 'contains') out[k] = walk(v, true);
      else if (k === 'prefixItems') out[k] = Array.isArray(v) ? v.map((child) => walk(child, true)) : v;
      else if (k === 'allOf' || k === 'anyOf' || k === 'oneOf') out[k] = Array.isArray(v) ? v.map((child) => walk(child, false)) : v;
      else if (k === 'then' || k === 'else') out[k] = walk(v, false);
      else out[k] = v; // `if`, `not`, annotations: as they are
    }
    const closable = atLocation && obj.properties !== undefined && !('additionalProperties' in obj) && !('unevaluatedProperties' in obj);
    if (closable) out.unevaluatedProperties = false;
    return out;
  };
  return walk(schema, true) as AnySchemaObject;
}

function mapValues(v: unknown, fn: (child: unknown) => unknown): unknown {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, child]) => [k, fn(child)]));
}

/** The keys a schema node names: its own `properties` and those of its branches. */
function knownKeys(node: unknown): string[] {
  if (!node || typeof node !== 'object') return [];
  const n = node as { properties?: Record<string, unknown>; allOf?: unknown[]; anyOf?: unknown[]; oneOf?: unknown[]; then?: unknown; else?: unknown };
  const branches = [...(n.allOf ?? []), ...(n.anyOf ?? []), ...(n.oneOf ?? []), n.then, n.else];
  return [...new Set([...Object.keys(n.properties ?? {}), ...branches.flatMap(knownKeys)])];
}

/** Optimal string alignment distance (Levenshtein with adjacent transpositions: `lables` → `labels` is 1). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The known name nearest to `typed` (case ignored), when it is close enough to be a typo of it. */
export function nearest(typed: string, candidates: readonly string[]): string | undefined {
  const t = typed.toLowerCase();
  let best: { name: string; d: number } | undefined;
  for (const name of candidates) {
    if (name === typed) continue;
    const d = editDistance(t, name.toLowerCase());
    const limit = Math.min(2, Math.max(1, Math.floor(name.length / 3)));
    if (d <= limit && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}

/** Unknown keys reported in one answer; the rest are counted. */
export const MAX_UNKNOWN_FIELDS = 100;

/**
 * The `unevaluatedProperties` errors of a closed schema → one problem per unknown key, e.g.
 * `spec.descripton is an unknown field (did you mean description?)`.
 */
export function unknownFieldProblems(errors: readonly ErrorObject[], toPath: (pointer: string) => string): Problem[] {
  const out = new Map<string, Problem>();
  let more = 0;
  for (const e of errors) {
    if (e.keyword !== 'unevaluatedProperties') continue;
    const key = String((e.params as { unevaluatedProperty: string }).unevaluatedProperty);
    const parent = toPath(e.instancePath);
    const path = parent ? `${parent}.${key}` : key;
    if (out.has(path)) continue;
    if (out.size >= MAX_UNKNOWN_FIELDS) {
      more++;
      continue;
    }
    const suggestion = nearest(key, knownKeys(e.parentSchema));
    out.set(path, { path, message: `${path} is an unknown field${suggestion ? ` (did you mean ${suggestion}?)` : ''}` });
  }
  const list = [...out.values()];
  if (more) list.push({ path: '', message: `and ${more} more unknown field${more === 1 ? '' : 's'}` });
  return list;
}

/** For a missing required key: the key the user typed instead, when one is close (`clientname` for `clientName`). */
export function typedInstead(missing: string, data: unknown): string | undefined {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return undefined;
  return Object.keys(data).find((k) => nearest(k, [missing]) === missing);
}
