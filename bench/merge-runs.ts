// Merges full `npm run bench -- --out <file>` runs made one after the other on the same machine
// into bench/results.json: every run kept (its machine block with the load average, its
// figures), and per figure the values of all runs with their spread (min–max) and whether its
// goal was met in each, and under a goal missed in any run the floor that stops it
// (bench/lib/limits.ts). `--table` prints the figures as Markdown rows (for docs/benchmarks.md).
//
// `--readme` writes the goals with the runs' values into README.md between its bench markers.
//
//   node --import tsx bench/merge-runs.ts run-1.json run-2.json run-3.json [--out bench/results.json] [--table] [--readme]
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { goalRows, markdownRows, replaceBlock, type Run, spreadOf } from './lib/spread.ts';
import { REPO_ROOT } from './lib/server-process.ts';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: 'string' }, table: { type: 'boolean', default: false }, readme: { type: 'boolean', default: false } } });
if (positionals.length > 0) {
  const runs = positionals.map((p) => JSON.parse(readFileSync(p, 'utf8')) as Run);
  const spread = spreadOf(runs);
  const out = values.out ?? join(REPO_ROOT, 'bench', 'results.json');
  const last = runs[runs.length - 1] as Run;
  writeFileSync(out, `${JSON.stringify({ machine: last.machine, figures: last.figures, runs, spread }, null, 2)}\n`);
  process.stdout.write(`written ${out}: ${runs.length} runs, ${spread.length} figures\n`);
  if (values.table) process.stdout.write(`${markdownRows(spread)}\n`);
  if (values.readme) {
    const readme = join(REPO_ROOT, 'README.md');
    writeFileSync(readme, replaceBlock(readFileSync(readme, 'utf8'), goalRows(spread)));
    process.stdout.write(`written the goals into ${readme}\n`);
  }
}
