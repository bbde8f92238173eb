import { extname } from 'node:path';
import { parseDocument } from 'yaml';
import { sha256 } from '../hash.ts';
import type { Manifest, Problem } from '../types.ts';
import { jsonSyntaxError, lineColumn } from './positions.ts';
import type { SchemaRegistry } from './validator.ts';

/** Files over this size are refused unread. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;
/** More YAML aliases than this in one file is an alias bomb (billion laughs), not a manifest. */
export const MAX_YAML_ALIASES = 100;

const MANIFEST_EXT = new Set(['.yaml', '.yml', '.json']);

export function isManifestPath(relPath: string): boolean {
  return MANIFEST_EXT.has(extname(relPath).toLowerCase()) && !INPUT_FILE.test(relPath) && !relPath.split('/').some((s) => s.startsWith('.'));
}

/** ClientSet input files (`*.csv`, `*.inputs.yaml`, `*.inputs.json`): data, never manifests. */
const INPUT_FILE = /(\.csv|\.inputs\.ya?ml|\.inputs\.json)$/i;

/** A path a source delivers: a manifest, or a ClientSet input file. */
export function isSourcePath(relPath: string): boolean {
  return (isManifestPath(relPath) || INPUT_FILE.test(relPath)) && !relPath.split('/').some((s) => s.startsWith('.'));
}

/** Input files: data beside the manifests, never manifests themselves. */
export function isInputPath(relPath: string): boolean {
  return isSourcePath(relPath) && !isManifestPath(relPath);
}

export function manifestKey(kind: string, name: string): string {
  return `${kind}/${name}`;
}

/** Content hashes are SHA-256 (re-exported for the reconciler, which imports it from here). */
export { sha256 };

export type LoadResult =
  /** `warnings`: unknown fields (see unknown-fields.ts), empty when there are none. */
  | { ok: true; path: string; hash: string; key: string; manifest: Manifest; warnings: Problem[] }
  | { ok: false; path: string; hash: string; reason: 'parse' | 'schema'; problems: Problem[]; kind?: string; name?: string };

/**
 * Parses and validates the bytes of one manifest file. Pure: no file system, no store.
 * `hash`: the bytes' sha256 when the caller already computed it (a scan hashes every file first).
 */
export function parseManifest(relPath: string, bytes: Buffer | string, schemas: SchemaRegistry, hash: string = sha256(bytes)): LoadResult {
  const text = typeof bytes === 'string' ? bytes : bytes.toString('utf8');
  const fail = (problems: Problem[], doc?: unknown): LoadResult => ({
    ok: false,
    path: relPath,
    hash,
    reason: 'parse',
    problems,
    ...identify(doc),
  });
  if (Buffer.byteLength(text) > MAX_MANIFEST_BYTES) {
    return fail([{ path: '', message: `file is larger than ${MAX_MANIFEST_BYTES} bytes` }]);
  }
  const read = readDocument(relPath, text);
  if ('problems' in read) return fail(read.problems);
  const doc = read.value;
  return checkDocument(relPath, hash, doc, schemas);
}

/**
 * The document of a manifest file as written (JSON or YAML by its extension), nothing validated
 * and no default filled in: what an edit of one field starts from, so the rest stays as written.
 */
export function readDocument(relPath: string, text: string): { value: unknown } | { problems: Problem[] } {
  if (extname(relPath).toLowerCase() === '.json') {
    try {
      return { value: JSON.parse(text) };
    } catch {
      // Where and why, never the text itself (Node 20's message quotes it and gives no position).
      const found = jsonSyntaxError(text) ?? { offset: 0, reason: 'not valid JSON' };
      const { line, column } = lineColumn(text, found.offset);
      return { problems: [{ path: '', message: `JSON syntax error: ${found.reason}`, line, column }] };
    }
  }
  return parseManifestText(text);
}

/** Validates an already parsed document (defaults are applied to it in place). */
export function checkDocument(relPath: string, hash: string, doc: unknown, schemas: SchemaRegistry): LoadResult {
  const result = schemas.validateManifest(doc);
  if (!result.ok) return { ok: false, path: relPath, hash, reason: 'schema', problems: result.problems, ...identify(doc) };
  const manifest = result.value;
  return { ok: true, path: relPath, hash, key: manifestKey(manifest.kind, manifest.metadata.name), manifest, warnings: result.warnings ?? [] };
}

/** One YAML document (a manifest file's text, a YAML request body): its value, or where and why it does not parse. */
export function parseManifestText(text: string): { value: unknown } | { problems: Problem[] } {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    return {
      problems: doc.errors.map((e) => ({
        path: '',
        // The parser's own "at line L, column C:" is given as fields instead.
        message: `YAML syntax error: ${e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`,
        line: e.linePos?.[0]?.line,
        column: e.linePos?.[0]?.col,
      })),
    };
  }
  try {
    return { value: doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }) };
  } catch (err) {
    return { problems: [{ path: '', message: `YAML refused: ${(err as Error).message}` }] };
  }
}

/** Best-effort kind and name of a document that did not validate, so its status can be found. */
function identify(doc: unknown): { kind?: string; name?: string } {
  if (!doc || typeof doc !== 'object') return {};
  const d = doc as { kind?: unknown; metadata?: { name?: unknown } };
  const kind = typeof d.kind === 'string' ? d.kind : undefined;
  const name = typeof d.metadata?.name === 'string' ? d.metadata.name : undefined;
  return { kind, name };
}
