import { stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { scheduleMinInterval } from '../../config.ts';
import { formatProblem } from '../../errors.ts';
import { defaultAppliers } from '../../kinds/index.ts';
import { isManifestPath, parseManifest } from '../../manifest/loader.ts';
import { locateProblems } from '../../manifest/positions.ts';
import { SchemaRegistry } from '../../manifest/validator.ts';
import { ManifestFiles } from '../../sources/files.ts';
import { strictManifests } from '../../config.ts';
import { schemasFor, type CommandContext } from '../context.ts';

/**
 * Validates every manifest under `target` (a folder, or one file) the way the controller would before applying it: the
 * JSON Schemas, then each kind's rules that need no store. One line per problem.
 */
export async function validateDir(target: string, opts: { strict?: boolean; schemas?: SchemaRegistry } = {}): Promise<{ files: number; problems: string[]; warnings: string[] }> {
  const schemas = opts.schemas ?? new SchemaRegistry(undefined, { strict: opts.strict });
  const appliers = new Map(defaultAppliers({ scheduleMinIntervalMs: scheduleMinInterval() }).map((a) => [a.kind, a]));
  const info = await stat(target).catch((err: NodeJS.ErrnoException) => {
    throw new Error(err.code === 'ENOENT' ? `${target}: no such file or directory` : `${target}: ${err.message}`);
  });
  // One file is validated on its own; a folder with every manifest under it.
  const files = new ManifestFiles(info.isDirectory() ? target : dirname(target));
  const paths = info.isDirectory() ? (await files.list()).filter(isManifestPath) : [basename(target)];
  const problems: string[] = [];
  const warnings: string[] = [];
  const owners = new Map<string, string>();
  for await (const file of files.readAll(paths)) {
    const path = file.path;
    if ('unreadable' in file) {
      problems.push(`${path}: ${file.unreadable}`);
      continue;
    }
    const r = parseManifest(path, file.bytes, schemas);
    if (!r.ok) {
      for (const p of locateProblems(file.bytes.toString('utf8'), r.problems)) problems.push(`${path}: ${formatProblem(p)}`);
      continue;
    }
    for (const w of locateProblems(file.bytes.toString('utf8'), r.warnings)) warnings.push(`${path}: warning: ${formatProblem(w)}`);
    const lint = appliers.get(r.manifest.kind)?.lint?.(r.manifest) ?? [];
    for (const p of lint) problems.push(`${path}: ${formatProblem(p)}`);
    const other = owners.get(r.key);
    if (other) problems.push(`${path}: ${r.key} is already defined in ${other}`);
    else owners.set(r.key, path);
  }
  return { files: paths.length, problems, warnings };
}

export function registerValidate(ctx: CommandContext): void {
  ctx.program
    .command('validate')
    .argument('<path>', 'folder of manifests (searched recursively), or one manifest file')
    .description('check manifests against the controller schemas; exit 1 listing every problem (unknown fields are warnings)')
    .option('--strict', 'unknown fields are errors, as with BI_STRICT_MANIFESTS=true')
    .action(async (dir: string, flags: { strict?: boolean }) => {
      const strict = flags.strict === true || strictManifests(ctx.io.env);
      const { files, problems, warnings } = await validateDir(resolve(dir), { strict, schemas: schemasFor(ctx, strict) });
      for (const w of warnings) ctx.io.err(w);
      for (const p of problems) ctx.io.err(p);
      const warned = warnings.length ? `, ${warnings.length} warning(s)` : '';
      if (problems.length) {
        ctx.io.err(`${problems.length} problem(s) in ${files} file(s)${warned}`);
        ctx.setCode(1);
      } else ctx.io.out(`${files} manifest(s) valid${warned}`);
    });
}
