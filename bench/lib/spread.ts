import { type Figure, type Machine, meets } from './report.ts';
import { limitOf, type Limit } from './limits.ts';

/** One full `npm run bench -- --out <file>` run as written. */
export interface Run {
  machine: Machine;
  figures: Figure[];
}

/** One figure over repeated runs. */
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
  /** Where the goal was missed in a run: the floor that stops it and why no design gets closer (bench/lib/limits.ts). */
  limit?: Limit;
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
    const met = goal ? values.map((v) => (v === null ? null : meets(v, goal))) : undefined;
    const limit = met?.includes(false) ? limitOf(f.figure) : undefined;
    return {
      ...(f.group ? { group: f.group } : {}),
      bench: f.bench,
      figure: f.figure,
      ...(f.unit ? { unit: f.unit } : {}),
      ...(goal ? { goal } : {}),
      values,
      min: present.length ? Math.min(...present) : null,
      max: present.length ? Math.max(...present) : null,
      ...(met ? { met } : {}),
      ...(skipped.length ? { skipped } : {}),
      ...(limit ? { limit } : {}),
    };
  });
}

/** `| figure | v1 / v2 / v3 (min–max) | goal | met in n of 3 |` rows, and a row under each missed goal naming its floor. */
export function markdownRows(spread: Spread[]): string {
  const show = (v: number | null) => (v === null ? '—' : String(v));
  return spread
    .flatMap((s) => {
      const met = s.met ? `${s.met.filter(Boolean).length} of ${s.met.length}` : '';
      const range = s.min !== null && s.min !== s.max ? ` (${s.min}–${s.max})` : '';
      const row = `| ${s.group ?? ''} | ${s.figure} | ${s.values.map(show).join(' / ')}${s.unit ? ` ${s.unit}` : ''}${range} | ${s.goal ?? ''} | ${met} |`;
      return s.limit ? [row, `| | ↳ stopped by: ${s.limit.floor} | ${s.limit.why} | | |`] : [row];
    })
    .join('\n');
}

/** The goals only, for the README: figure, the runs' values, goal, met in n of m, and the floor that stops a missed one (why: in results.json). */
export function goalRows(spread: Spread[]): string {
  const show = (v: number | null) => (v === null ? '—' : String(v));
  const rows = spread
    .filter((s) => s.goal)
    .map((s) => {
      const met = s.met ? `${s.met.filter(Boolean).length} of ${s.met.length}` : '';
      const stop = s.limit ? s.limit.floor : '';
      return `| ${s.group ? `${s.group}: ` : ''}${s.figure} | ${s.values.map(show).join(' / ')}${s.unit ? ` ${s.unit}` : ''} | ${s.goal} | ${met} | ${stop} |`;
    });
  return ['| Figure | Runs | Goal | Met | Where missed: the floor that stops it (why: `bench/results.json`, `bench/lib/limits.ts`) |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** `text` with the part between the two markers replaced by `block` (the markers kept). */
export function replaceBlock(text: string, block: string, start = '<!-- bench:goals -->', end = '<!-- /bench:goals -->'): string {
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) throw new Error(`the markers ${start} … ${end} are not in the file`);
  return `${text.slice(0, a + start.length)}\n${block}\n${text.slice(b)}`;
}
