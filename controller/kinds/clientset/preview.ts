import { formatProblem } from '../../errors.ts';
import { sha256 } from '../../hash.ts';
import type { SchemaRegistry } from '../../manifest/validator.ts';
import { isPlainObject } from '../../objects.ts';
import type { SourceFile } from '../../contract.ts';
import type { Manifest } from '../../types.ts';
import { readInputs } from './inputs.ts';
import { canonical, TemplateRenderer } from './render.ts';
import type { ClientSetStore } from './store.ts';
import type { ClientSetSpec, PreviewAction } from './types.ts';

export interface FieldChange {
  path: string;
  from?: unknown;
  to?: unknown;
}

export interface TenantPreview {
  input: string;
  action: PreviewAction;
  objects: string[];
  changes: FieldChange[];
  problems?: string[];
}

export interface Preview {
  name: string;
  digest: string | null;
  reason: string | null;
  tenants: TenantPreview[];
}

export interface PreviewContext {
  store: ClientSetStore;
  schemas: SchemaRegistry;
  read(path: string): SourceFile | null;
  fileOf(key: string): string | undefined;
  /** The reconciler's one dry run (a transaction that always rolls back); `message`: the refusal's one text (`<step>: <reason>`). */
  dryRun(objects: { key: string; manifest: Manifest }[]): Map<string, { ok: true } | { ok: false; message: string }>;
}

/**
 * What applying `manifest` (a ClientSet) would do per tenant, against what its tenants were last
 * released with: create, update (with the field-level changes), unchanged, orphaned, delete, or
 * invalid (render, schema, a collision with a file's object, or the real apply's dry run).
 */
export function previewClientSet(manifest: Manifest<ClientSetSpec>, ctx: PreviewContext): Preview {
  const name = manifest.metadata.name;
  const spec = manifest.spec;
  const stored = new Map(ctx.store.tenants(name).map((t) => [t.inputId, t]));
  const read = readInputs(spec, ctx.read, ctx.schemas, sha256);
  if (!read.ok) {
    return { name, digest: null, reason: `inputs could not be read, nothing would change: ${read.problems.map(formatProblem).join('; ')}`, tenants: [] };
  }
  const renderer = new TemplateRenderer(ctx.schemas);
  const rendered = renderer.renderAll(spec, read.inputs);
  const digest = sha256(rendered.map((r) => `${r.id}:${r.ok ? r.digest : 'invalid'}`).join('\n'));
  const tenants: TenantPreview[] = [];
  const toApply: { key: string; manifest: Manifest }[] = [];
  for (const r of rendered) {
    const prev = stored.get(r.id);
    if (!r.ok) {
      tenants.push({ input: r.id, action: 'invalid', objects: [], changes: [], problems: r.problems.map(formatProblem) });
      continue;
    }
    const collision = r.keys.map((k) => [k, ctx.fileOf(k)] as const).find(([, f]) => f !== undefined);
    if (collision) {
      tenants.push({ input: r.id, action: 'invalid', objects: r.keys, changes: [], problems: [`${collision[0]} is already defined in ${collision[1]}`] });
      continue;
    }
    const action: PreviewAction = !prev || prev.gone === 'offboarded' ? 'create' : prev.digest === r.digest || spec.policy === 'create-only' ? 'unchanged' : 'update';
    const changes = action === 'update' && prev ? diffDocs(prev.docs, r.docs) : [];
    tenants.push({ input: r.id, action, objects: r.keys, changes });
    if (action !== 'unchanged') r.docs.forEach((doc, i) => toApply.push({ key: r.keys[i], manifest: doc }));
  }
  const present = new Set(read.inputs.map((i) => i.id));
  const gone = [...stored.values()].filter((t) => !present.has(t.inputId) && t.gone !== 'offboarded');
  let reason: string | null = null;
  let deleting = spec.policy === 'sync' && gone.length > 0;
  if (deleting && read.inputs.length === 0 && !spec.allowEmpty) {
    deleting = false;
    reason = `the input set is empty and allowEmpty is false: ${gone.length} tenant(s) would be kept`;
  } else if (deleting) {
    const live = [...stored.values()].filter((t) => t.gone !== 'offboarded').length;
    const percent = (gone.length * 100) / live;
    if (percent > spec.maxDeletePercent) reason = `deleting ${gone.length} of ${live} tenants (${Math.round(percent)}%) is more than maxDeletePercent ${spec.maxDeletePercent}%: held until approved`;
  }
  for (const t of gone) tenants.push({ input: t.inputId, action: deleting ? 'delete' : 'orphaned', objects: t.keys, changes: [] });
  const results = ctx.dryRun(toApply);
  for (const t of tenants) {
    const failures = t.action === 'create' || t.action === 'update' ? t.objects.map((k) => [k, results.get(k)] as const).filter(([, r]) => r && !r.ok) : [];
    if (failures.length) {
      t.action = 'invalid';
      t.problems = failures.map(([k, r]) => `${k}: ${r && !r.ok ? r.message : ''}`);
    }
  }
  tenants.sort((a, b) => a.input.localeCompare(b.input));
  return { name, digest, reason, tenants };
}

/** Field-level changes between two versions of a tenant's documents (leaves, by object key and field path). */
export function diffDocs(before: Manifest[], after: Manifest[]): FieldChange[] {
  const keyOf = (d: Manifest) => `${d.kind}/${d.metadata.name}`;
  const old = new Map(before.map((d) => [keyOf(d), d]));
  const now = new Map(after.map((d) => [keyOf(d), d]));
  const out: FieldChange[] = [];
  for (const [key, doc] of now) {
    const prev = old.get(key);
    if (!prev) out.push({ path: key, to: 'added' });
    else for (const c of diffFields(prev, doc)) out.push({ ...c, path: `${key} ${c.path}` });
  }
  for (const key of old.keys()) if (!now.has(key)) out.push({ path: key, from: 'removed' });
  return out;
}

/** Field-level changes between two versions of one document (leaf paths such as `spec.schedule.cronExpression`). */
export function diffFields(before: unknown, after: unknown): FieldChange[] {
  const out: FieldChange[] = [];
  walk(before, after, '', (path, from, to) => out.push({ path, ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) }));
  return out;
}

function walk(a: unknown, b: unknown, path: string, emit: (path: string, from: unknown, to: unknown) => void): void {
  if (isPlainObject(a) && isPlainObject(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], path ? `${path}.${k}` : k, emit);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((v, i) => walk(v, b[i], `${path}[${i}]`, emit));
    return;
  }
  if (canonical(a) !== canonical(b)) emit(path, a, b);
}
