import { describe, expect, it } from 'vitest';
import type { Figure, Machine } from '../../bench/lib/report.ts';
import { Report } from '../../bench/lib/report.ts';
import { limitOf } from '../../bench/lib/limits.ts';
import { goalRows, markdownRows, replaceBlock, spreadOf, type Run } from '../../bench/lib/spread.ts';

const machine: Machine = { nproc: 2, cpu: 'test', memoryGb: 1, node: 'v20', platform: 'linux x64', date: '2026-11-27T00:00:00Z' };
const GIT = 'git mode imports/s / commits/s of that floor';
const run = (figures: Figure[]): Run => ({ machine, figures });
const fig = (figure: string, value: number | undefined, goal?: string, extra: Partial<Figure> = {}): Figure => ({ group: 'import', bench: 'floors', figure, ...(value === undefined ? {} : { value }), unit: 'x', ...(goal ? { goal } : {}), ...extra });

describe('bench: repeated runs merged, and the floor named under a missed goal (issue 30)', () => {
  it('keeps each run’s value, its spread, and the goal judged per run', () => {
    const [s] = spreadOf([run([fig('ratio', 0.5, '>= 0.6')]), run([fig('ratio', 0.7, '>= 0.6')]), run([fig('ratio', undefined, undefined, { skipped: 'no git' })])]);
    expect(s).toMatchObject({ figure: 'ratio', values: [0.5, 0.7, null], min: 0.5, max: 0.7, goal: '>= 0.6', met: [false, true, null], skipped: ['no git'] });
  });

  it('names the floor that stops a goal missed in any run, and only then', () => {
    expect(limitOf(GIT)).toBeDefined();
    const missed = spreadOf([run([fig(GIT, 0.9, '>= 1.0')]), run([fig(GIT, 1.1, '>= 1.0')])]);
    expect(missed[0]?.limit).toEqual(limitOf(GIT));
    const met = spreadOf([run([fig(GIT, 1.2, '>= 1.0')]), run([fig(GIT, 1.1, '>= 1.0')])]);
    expect(met[0]?.limit).toBeUndefined();
    expect(markdownRows(missed)).toContain(`stopped by: ${limitOf(GIT)?.floor}`);
    expect(goalRows(missed)).toContain(`| import: ${GIT} | 0.9 / 1.1 x | >= 1.0 | 1 of 2 | ${limitOf(GIT)?.floor}`);
  });

  it('a single run’s report carries the limit of a missed goal on the figure itself', () => {
    const report = new Report(() => undefined);
    expect(report.add({ bench: 'floors', figure: GIT, value: 0.5, goal: '>= 1.0' }).limit).toEqual(limitOf(GIT));
    expect(report.add({ bench: 'floors', figure: GIT, value: 1.5, goal: '>= 1.0' }).limit).toBeUndefined();
  });

  it('replaces the README block between its markers and refuses a file without them', () => {
    const text = 'a\n<!-- bench:goals -->\nold\n<!-- /bench:goals -->\nb\n';
    expect(replaceBlock(text, 'new')).toBe('a\n<!-- bench:goals -->\nnew\n<!-- /bench:goals -->\nb\n');
    expect(() => replaceBlock('no markers', 'new')).toThrow(/markers/);
  });
});
