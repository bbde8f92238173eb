import { sha256 } from '../manifest/loader.ts';
import type { Manifest } from '../types.ts';

/** Hash of what an apply depends on: a file that only changes formatting applies nothing. */
export function specHash(m: Manifest): string {
  return sha256(canonicalJson({ apiVersion: m.apiVersion, kind: m.kind, name: m.metadata.name, spec: m.spec }));
}

/** JSON with object keys sorted at every level (undefined members dropped). */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}
