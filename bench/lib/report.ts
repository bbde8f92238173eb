import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { limitOf, type Limit } from './limits.ts';

/** One measured (or honestly skipped) figure. */
export interface Figure {
  /** The `npm run bench -- --only` group that measured it. */
  group?: string;
  bench: string;
  figure: string;
  value?: number;
  unit?: string;
  /** The goal as text, e.g. `>= 0.9` or `< 50 ms`. */
  goal?: string;
  met?: boolean;
  skipped?: string;
  detail?: Record<string, unknown>;
  /** A missed goal's floor and why no design gets closer (bench/lib/limits.ts). */
  limit?: Limit;
}

export interface Machine {
  nproc: number;
  cpu: string;
  memoryGb: number;
  node: string;
  platform: string;
  date: string;
  /** The machine's load average (1, 5, 15 min) when the run started and when it ended: other sessions share it. */
  loadavg?: { start: number[]; end?: number[] };
}

export function machine(): Machine {
  let nproc = cpus().length;
  try {
    nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim()) || nproc;
  } catch {
    /* not on Linux */
  }
  return {
    nproc,
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    date: new Date().toISOString(),
    loadavg: { start: loadavg().map((l) => Math.round(l * 100) / 100) },
  };
}

/** Checks `value` against a goal written `< 50`, `<= 1`, `>= 0.9`, `> 500`. */
export function meets(value: number, goal: string): boolean {
  const m = /^(<=|>=|<|>)\s*([\d.]+)/.exec(goal.trim());
  if (!m) return true;
  const g = Number(m[2]);
  switch (m[1]) {
    case '<':
      return value < g;
    case '<=':
      return value <= g;
    case '>':
      return value > g;
    default:
      return value >= g;
  }
}

/** Collects figures: one JSON line each as they come, a table and `bench/results.json` at the end. */
export class Report {
  readonly figures: Figure[] = [];
  /** Set by the runner before each benchmark group. */
  group: string | undefined;
  readonly #out: (line: string) => void;

  constructor(out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)) {
    this.#out = out;
  }

  add(f: Omit<Figure, 'met'>): Figure {
    const fig: Figure = { ...(this.group ? { group: this.group } : {}), ...f };
    if (f.value !== undefined && f.goal) fig.met = meets(f.value, f.goal);
    const limit = fig.met === false ? limitOf(f.figure) : undefined;
    if (limit) fig.limit = limit;
    this.figures.push(fig);
    this.#out(JSON.stringify(fig));
    return fig;
  }

  skip(bench: string, figure: string, reason: string): Figure {
    return this.add({ bench, figure, skipped: reason });
  }

  table(): string {
    const rows = this.figures.map((f) => [
      f.bench,
      f.figure,
      f.skipped ? 'skipped' : `${f.value}${f.unit ? ` ${f.unit}` : ''}`,
      f.goal ?? '',
      f.skipped ? f.skipped : f.met === undefined ? '' : f.met ? 'met' : 'MISSED',
    ]);
    const head = ['bench', 'figure', 'value', 'goal', 'result'];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
    return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
  }

  /**
   * Writes `{machine, figures}`. With `keepOtherGroups`, figures of groups not run this time
   * are kept from the file (a `--only` run updates its own figures, not the rest).
   */
  write(path: string, m: Machine, keepOtherGroups?: Set<string>): void {
    let figures = this.figures;
    // The repeated full runs and their spread (bench/merge-runs.ts) stay as they were.
    let rest: Record<string, unknown> = {};
    if (keepOtherGroups && existsSync(path)) {
      const old = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown> & { figures?: Figure[] };
      rest = Object.fromEntries(Object.entries(old).filter(([k]) => k !== 'figures' && k !== 'machine'));
      figures = [...(old.figures ?? []).filter((f) => f.group && !keepOtherGroups.has(f.group)), ...this.figures];
    }
    writeFileSync(path, `${JSON.stringify({ machine: m, figures, ...rest }, null, 2)}\n`);
  }
}
