import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { parse, stringify } from 'yaml';
import { formatProblem } from '../../errors.ts';
import { sha256 } from '../../hash.ts';
import { readInputs } from '../../kinds/clientset/inputs.ts';
import { TemplateRenderer } from '../../kinds/clientset/render.ts';
import type { ClientSetSpec } from '../../kinds/clientset/types.ts';
import { parseManifest } from '../../manifest/loader.ts';
import { SchemaRegistry } from '../../manifest/validator.ts';
import { ManifestFiles } from '../../sources/files.ts';
import { schemasFor, type CommandContext } from '../context.ts';

/**
 * Renders a ClientSet file offline (no store): its inputs read under the manifests root, each
 * input's objects validated by their kind's schema. The rendered objects as multi-document YAML,
 * and one line per problem.
 */
export async function renderTemplate(file: string, root: string, schemas: SchemaRegistry = new SchemaRegistry()): Promise<{ documents: string[]; problems: string[] }> {
  const rel = relative(root, file);
  if (rel.startsWith('..') || rel.startsWith(sep)) throw new Error(`${file} is not inside the manifests root ${root} (use --root)`);
  const files = new ManifestFiles(root);
  const read = files.read(rel.split(sep).join('/'));
  if (!read) throw new Error(`${file}: no such file`);
  if ('unreadable' in read) return { documents: [], problems: [`${rel}: ${read.unreadable}`] };
  const parsed = parseManifest(rel, read.bytes, schemas);
  if (!parsed.ok) return { documents: [], problems: parsed.problems.map((p) => `${rel}: ${formatProblem(p)}`) };
  if (parsed.manifest.kind !== 'ClientSet') return { documents: [], problems: [`${rel}: is a ${parsed.manifest.kind}, not a ClientSet`] };
  const spec = parsed.manifest.spec as ClientSetSpec;
  const inputs = readInputs(spec, (p) => files.read(p), schemas, sha256);
  if (!inputs.ok) return { documents: [], problems: inputs.problems.map((p) => `${rel}: ${formatProblem(p)}`) };
  const documents: string[] = [];
  const problems: string[] = [];
  for (const r of new TemplateRenderer(schemas).renderAll(spec, inputs.inputs)) {
    if (!r.ok) for (const p of r.problems) problems.push(`input ${r.id}: ${formatProblem(p)}`);
    else for (const doc of r.docs) documents.push(stringify(doc));
  }
  return { documents, problems };
}

/**
 * The root of a ClientSet file outside `--manifests` given without `--root`: the nearest folder,
 * from the file's own upward, that holds every `inputsFrom` path (a set in `<root>/clientsets/`
 * reading `catalog/x.csv` finds `<root>`); the file's folder when none does.
 */
async function inputsRoot(file: string): Promise<string> {
  let paths: string[];
  try {
    const doc = parse(await readFile(file, 'utf8')) as { spec?: { inputsFrom?: unknown } } | null;
    const from = doc?.spec?.inputsFrom;
    paths = (Array.isArray(from) ? from : [])
      .map((f: unknown) => (typeof f === 'object' && f !== null ? (f as { path?: unknown }).path : undefined))
      .filter((p): p is string => typeof p === 'string' && p.length > 0);
  } catch {
    return dirname(file);
  }
  if (paths.length === 0) return dirname(file);
  for (let d = dirname(file); ; d = dirname(d)) {
    if (paths.every((p) => existsSync(join(d, p)))) return d;
    if (dirname(d) === d) return dirname(file);
  }
}

export function registerTemplate(ctx: CommandContext): void {
  const template = ctx.program.command('template').description('ClientSet templates');
  template
    .command('render')
    .argument('<file>', 'a ClientSet manifest')
    .option('--root <dir>', 'the manifests root its inputsFrom paths are relative to (default: --manifests when the file is inside it, else the nearest folder upward holding its inputsFrom files)')
    .description('render a ClientSet offline (no store) and print the generated objects as multi-document YAML; exit 1 listing per-input errors')
    .action(async (file: string, opts: { root?: string }) => {
      const abs = resolve(file);
      await stat(abs).catch(() => {
        throw new Error(`${file}: no such file`);
      });
      const manifests = resolve((ctx.program.opts() as { manifests?: string }).manifests ?? ctx.io.env.BI_MANIFESTS_DIR ?? 'manifests');
      const inside = !relative(manifests, abs).startsWith('..');
      const root = resolve(opts.root ?? (inside ? manifests : await inputsRoot(abs)));
      const { documents, problems } = await renderTemplate(abs, root, schemasFor(ctx, false));
      if (documents.length) ctx.io.out(documents.map((d) => `---\n${d.trimEnd()}`).join('\n'));
      for (const p of problems) ctx.io.err(p);
      if (problems.length) {
        ctx.io.err(`${problems.length} problem(s) rendering ${basename(abs)}`);
        ctx.setCode(1);
      }
    });
}
