// Merges full `npm run bench -- --out <file>` runs made one after the other on the same machine
// into bench/results.json: every run kept (its machine block with the load average, its
// figures), and per figure the values of all runs with their spread (min–max) and whether its
// goal was met in each. `--table` prints the figures as Markdown rows (for docs/benchmarks.md).
//
//   node --import tsx bench/merge-runs.ts run-1.json run-2.json run-3.json [--out bench/results.json] [--table]
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type Figure, type Machine, meets } from './lib/report.ts';
import { REPO_ROOT } from './lib/server-process.ts';

interface Run {
  machine: Machine;
  figures: Figure[];
}

export interface Spread {
  group?: string;
  bench: string;
  figure: string;
  unit?: string;
  goal?: string;
  /** One value per run (null: skipped or absent in that run). */
  values: (number | null)[];
  min: number | null;
  max: number | null;
  /** Whether the goal was met, per run. */
  met?: (boolean | null)[];
  skipped?: string[];
}

export function spreadOf(runs: Run[]): Spread[] {
  const keyOf = (f: Figure) => `${f.group ?? ''}\u0000${f.bench}\u0000${f.figure}`;
  const order: string[] = [];
  const first = new Map<string, Figure>();
  for (const run of runs) {
    for (const f of run.figures) {
      const k = keyOf(f);
      if (!first.has(k)) {
        first.set(k, f);
        order.push(k);
      }
    }
  }
  return order.map((k) => {
    const f = first.get(k) as Figure;
    const found = runs.map((r) => r.figures.find((g) => keyOf(g) === k));
    const values = found.map((g) => (g && !g.skipped && typeof g.value === 'number' && Number.isFinite(g.value) ? g.value : null));
    const present = values.filter((v): v is number => v !== null);
    const skipped = found.filter((g) => g?.skipped).map((g) => g?.skipped as string);
    // The goal as the newest run states it, every run judged against it (a goal changed between runs).
    const goal = [...found].reverse().find((g) => g?.goal)?.goal;
    return {
      ...(f.group ? { group: f.group } : {}),
      bench: f.bench,
      figure: f.figure,
      ...(f.unit ? { unit: f.unit } : {}),
      ...(goal ? { goal } : {}),
      values,
      min: present.length ? Math.min(...present) : null,
      max: present.length ? Math.max(...present) : null,
      ...(goal ? { met: values.map((v) => (v === null ? null : meets(v, goal))) } : {}),
      ...(skipped.length ? { skipped } : {}),
    };
  });
}

/** `| figure | v1 / v2 / v3 (min–max) | goal | met in n of 3 |` rows. */
export function markdownRows(spread: Spread[]): string {
  const show = (v: number | null) => (v === null ? '—' : String(v));
  return spread
    .map((s) => {
      const met = s.met ? `${s.met.filter(Boolean).length} of ${s.met.length}` : '';
      const range = s.min !== null && s.min !== s.max ? ` (${s.min}–${s.max})` : '';
      return `| ${s.group ?? ''} | ${s.figure} | ${s.values.map(show).join(' / ')}${s.unit ? ` ${s.unit}` : ''}${range} | ${s.goal ?? ''} | ${met} |`;
    })
    .join('\n');
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: 'string' }, table: { type: 'boolean', default: false } } });
if (positionals.length > 0) {
  const runs = positionals.map((p) => JSON.parse(readFileSync(p, 'utf8')) as Run);
  const spread = spreadOf(runs);
  const out = values.out ?? join(REPO_ROOT, 'bench', 'results.json');
  const last = runs[runs.length - 1] as Run;
  writeFileSync(out, `${JSON.stringify({ machine: last.machine, figures: last.figures, runs, spread }, null, 2)}\n`);
  process.stdout.write(`written ${out}: ${runs.length} runs, ${spread.length} figures\n`);
  if (values.table) process.stdout.write(`${markdownRows(spread)}\n`);
}
